/* net subsystem: the biggest module (a table of protocol handlers), slowest to compile */
static int proto_0(int x) { for (int k = 0; k < 3; k++) x = x * 7 + (x >> 1); return x; }
static int proto_1(int x) { for (int k = 0; k < 4; k++) x = x * 8 + (x >> 2); return x; }
static int proto_2(int x) { for (int k = 0; k < 5; k++) x = x * 9 + (x >> 3); return x; }
static int proto_3(int x) { for (int k = 0; k < 6; k++) x = x * 10 + (x >> 4); return x; }
static int proto_4(int x) { for (int k = 0; k < 7; k++) x = x * 11 + (x >> 5); return x; }
static int proto_5(int x) { for (int k = 0; k < 8; k++) x = x * 12 + (x >> 6); return x; }
static int proto_6(int x) { for (int k = 0; k < 9; k++) x = x * 13 + (x >> 7); return x; }
static int proto_7(int x) { for (int k = 0; k < 10; k++) x = x * 14 + (x >> 1); return x; }
static int proto_8(int x) { for (int k = 0; k < 11; k++) x = x * 15 + (x >> 2); return x; }
static int proto_9(int x) { for (int k = 0; k < 12; k++) x = x * 16 + (x >> 3); return x; }
static int proto_10(int x) { for (int k = 0; k < 13; k++) x = x * 17 + (x >> 4); return x; }
static int proto_11(int x) { for (int k = 0; k < 14; k++) x = x * 18 + (x >> 5); return x; }
static int proto_12(int x) { for (int k = 0; k < 15; k++) x = x * 19 + (x >> 6); return x; }
static int proto_13(int x) { for (int k = 0; k < 16; k++) x = x * 20 + (x >> 7); return x; }
static int proto_14(int x) { for (int k = 0; k < 17; k++) x = x * 21 + (x >> 1); return x; }
static int proto_15(int x) { for (int k = 0; k < 18; k++) x = x * 22 + (x >> 2); return x; }
static int proto_16(int x) { for (int k = 0; k < 19; k++) x = x * 23 + (x >> 3); return x; }
static int proto_17(int x) { for (int k = 0; k < 20; k++) x = x * 24 + (x >> 4); return x; }
static int proto_18(int x) { for (int k = 0; k < 21; k++) x = x * 25 + (x >> 5); return x; }
static int proto_19(int x) { for (int k = 0; k < 22; k++) x = x * 26 + (x >> 6); return x; }
static int proto_20(int x) { for (int k = 0; k < 23; k++) x = x * 27 + (x >> 7); return x; }
static int proto_21(int x) { for (int k = 0; k < 24; k++) x = x * 28 + (x >> 1); return x; }
static int proto_22(int x) { for (int k = 0; k < 25; k++) x = x * 29 + (x >> 2); return x; }
static int proto_23(int x) { for (int k = 0; k < 26; k++) x = x * 30 + (x >> 3); return x; }
static int proto_24(int x) { for (int k = 0; k < 27; k++) x = x * 31 + (x >> 4); return x; }
static int proto_25(int x) { for (int k = 0; k < 28; k++) x = x * 32 + (x >> 5); return x; }
static int proto_26(int x) { for (int k = 0; k < 29; k++) x = x * 33 + (x >> 6); return x; }
static int proto_27(int x) { for (int k = 0; k < 30; k++) x = x * 34 + (x >> 7); return x; }
static int proto_28(int x) { for (int k = 0; k < 31; k++) x = x * 35 + (x >> 1); return x; }
static int proto_29(int x) { for (int k = 0; k < 32; k++) x = x * 36 + (x >> 2); return x; }
static int proto_30(int x) { for (int k = 0; k < 33; k++) x = x * 37 + (x >> 3); return x; }
static int proto_31(int x) { for (int k = 0; k < 34; k++) x = x * 38 + (x >> 4); return x; }
static int proto_32(int x) { for (int k = 0; k < 35; k++) x = x * 39 + (x >> 5); return x; }
static int proto_33(int x) { for (int k = 0; k < 36; k++) x = x * 40 + (x >> 6); return x; }
static int proto_34(int x) { for (int k = 0; k < 37; k++) x = x * 41 + (x >> 7); return x; }
static int proto_35(int x) { for (int k = 0; k < 38; k++) x = x * 42 + (x >> 1); return x; }
static int proto_36(int x) { for (int k = 0; k < 39; k++) x = x * 43 + (x >> 2); return x; }
static int proto_37(int x) { for (int k = 0; k < 40; k++) x = x * 44 + (x >> 3); return x; }
static int proto_38(int x) { for (int k = 0; k < 41; k++) x = x * 45 + (x >> 4); return x; }
static int proto_39(int x) { for (int k = 0; k < 42; k++) x = x * 46 + (x >> 5); return x; }
static int proto_40(int x) { for (int k = 0; k < 43; k++) x = x * 47 + (x >> 6); return x; }
static int proto_41(int x) { for (int k = 0; k < 44; k++) x = x * 48 + (x >> 7); return x; }
static int proto_42(int x) { for (int k = 0; k < 45; k++) x = x * 49 + (x >> 1); return x; }
static int proto_43(int x) { for (int k = 0; k < 46; k++) x = x * 50 + (x >> 2); return x; }
static int proto_44(int x) { for (int k = 0; k < 47; k++) x = x * 51 + (x >> 3); return x; }
static int proto_45(int x) { for (int k = 0; k < 48; k++) x = x * 52 + (x >> 4); return x; }
static int proto_46(int x) { for (int k = 0; k < 49; k++) x = x * 53 + (x >> 5); return x; }
static int proto_47(int x) { for (int k = 0; k < 50; k++) x = x * 54 + (x >> 6); return x; }
static int proto_48(int x) { for (int k = 0; k < 51; k++) x = x * 55 + (x >> 7); return x; }
static int proto_49(int x) { for (int k = 0; k < 52; k++) x = x * 56 + (x >> 1); return x; }
static int proto_50(int x) { for (int k = 0; k < 53; k++) x = x * 57 + (x >> 2); return x; }
static int proto_51(int x) { for (int k = 0; k < 54; k++) x = x * 58 + (x >> 3); return x; }
static int proto_52(int x) { for (int k = 0; k < 55; k++) x = x * 59 + (x >> 4); return x; }
static int proto_53(int x) { for (int k = 0; k < 56; k++) x = x * 60 + (x >> 5); return x; }
static int proto_54(int x) { for (int k = 0; k < 57; k++) x = x * 61 + (x >> 6); return x; }
static int proto_55(int x) { for (int k = 0; k < 58; k++) x = x * 62 + (x >> 7); return x; }
static int proto_56(int x) { for (int k = 0; k < 59; k++) x = x * 63 + (x >> 1); return x; }
static int proto_57(int x) { for (int k = 0; k < 60; k++) x = x * 64 + (x >> 2); return x; }
static int proto_58(int x) { for (int k = 0; k < 61; k++) x = x * 65 + (x >> 3); return x; }
static int proto_59(int x) { for (int k = 0; k < 62; k++) x = x * 66 + (x >> 4); return x; }
static int proto_60(int x) { for (int k = 0; k < 63; k++) x = x * 67 + (x >> 5); return x; }
static int proto_61(int x) { for (int k = 0; k < 64; k++) x = x * 68 + (x >> 6); return x; }
static int proto_62(int x) { for (int k = 0; k < 65; k++) x = x * 69 + (x >> 7); return x; }
static int proto_63(int x) { for (int k = 0; k < 66; k++) x = x * 70 + (x >> 1); return x; }
static int proto_64(int x) { for (int k = 0; k < 67; k++) x = x * 71 + (x >> 2); return x; }
static int proto_65(int x) { for (int k = 0; k < 68; k++) x = x * 72 + (x >> 3); return x; }
static int proto_66(int x) { for (int k = 0; k < 69; k++) x = x * 73 + (x >> 4); return x; }
static int proto_67(int x) { for (int k = 0; k < 70; k++) x = x * 74 + (x >> 5); return x; }
static int proto_68(int x) { for (int k = 0; k < 71; k++) x = x * 75 + (x >> 6); return x; }
static int proto_69(int x) { for (int k = 0; k < 72; k++) x = x * 76 + (x >> 7); return x; }
static int proto_70(int x) { for (int k = 0; k < 73; k++) x = x * 77 + (x >> 1); return x; }
static int proto_71(int x) { for (int k = 0; k < 74; k++) x = x * 78 + (x >> 2); return x; }
static int proto_72(int x) { for (int k = 0; k < 75; k++) x = x * 79 + (x >> 3); return x; }
static int proto_73(int x) { for (int k = 0; k < 76; k++) x = x * 80 + (x >> 4); return x; }
static int proto_74(int x) { for (int k = 0; k < 77; k++) x = x * 81 + (x >> 5); return x; }
static int proto_75(int x) { for (int k = 0; k < 78; k++) x = x * 82 + (x >> 6); return x; }
static int proto_76(int x) { for (int k = 0; k < 79; k++) x = x * 83 + (x >> 7); return x; }
static int proto_77(int x) { for (int k = 0; k < 80; k++) x = x * 84 + (x >> 1); return x; }
static int proto_78(int x) { for (int k = 0; k < 81; k++) x = x * 85 + (x >> 2); return x; }
static int proto_79(int x) { for (int k = 0; k < 82; k++) x = x * 86 + (x >> 3); return x; }
int (*const net_handlers[])(int) = {
    proto_0, proto_1, proto_2, proto_3, proto_4, proto_5, proto_6, proto_7,
    proto_8, proto_9, proto_10, proto_11, proto_12, proto_13, proto_14, proto_15,
    proto_16, proto_17, proto_18, proto_19, proto_20, proto_21, proto_22, proto_23,
    proto_24, proto_25, proto_26, proto_27, proto_28, proto_29, proto_30, proto_31,
    proto_32, proto_33, proto_34, proto_35, proto_36, proto_37, proto_38, proto_39,
    proto_40, proto_41, proto_42, proto_43, proto_44, proto_45, proto_46, proto_47,
    proto_48, proto_49, proto_50, proto_51, proto_52, proto_53, proto_54, proto_55,
    proto_56, proto_57, proto_58, proto_59, proto_60, proto_61, proto_62, proto_63,
    proto_64, proto_65, proto_66, proto_67, proto_68, proto_69, proto_70, proto_71,
    proto_72, proto_73, proto_74, proto_75, proto_76, proto_77, proto_78, proto_79
};

int net_init(void)
{
    static volatile int ready;
    ready = 1;
    return ready;
}

/* FFT butterflies: the biggest source, slowest to compile */
static int bfly_0(int x) { for (int k = 0; k < 3; k++) x = x * 7 + (x >> 1); return x; }
static int bfly_1(int x) { for (int k = 0; k < 4; k++) x = x * 8 + (x >> 2); return x; }
static int bfly_2(int x) { for (int k = 0; k < 5; k++) x = x * 9 + (x >> 3); return x; }
static int bfly_3(int x) { for (int k = 0; k < 6; k++) x = x * 10 + (x >> 4); return x; }
static int bfly_4(int x) { for (int k = 0; k < 7; k++) x = x * 11 + (x >> 5); return x; }
static int bfly_5(int x) { for (int k = 0; k < 8; k++) x = x * 12 + (x >> 6); return x; }
static int bfly_6(int x) { for (int k = 0; k < 9; k++) x = x * 13 + (x >> 7); return x; }
static int bfly_7(int x) { for (int k = 0; k < 10; k++) x = x * 14 + (x >> 1); return x; }
static int bfly_8(int x) { for (int k = 0; k < 11; k++) x = x * 15 + (x >> 2); return x; }
static int bfly_9(int x) { for (int k = 0; k < 12; k++) x = x * 16 + (x >> 3); return x; }
static int bfly_10(int x) { for (int k = 0; k < 13; k++) x = x * 17 + (x >> 4); return x; }
static int bfly_11(int x) { for (int k = 0; k < 14; k++) x = x * 18 + (x >> 5); return x; }
static int bfly_12(int x) { for (int k = 0; k < 15; k++) x = x * 19 + (x >> 6); return x; }
static int bfly_13(int x) { for (int k = 0; k < 16; k++) x = x * 20 + (x >> 7); return x; }
static int bfly_14(int x) { for (int k = 0; k < 17; k++) x = x * 21 + (x >> 1); return x; }
static int bfly_15(int x) { for (int k = 0; k < 18; k++) x = x * 22 + (x >> 2); return x; }
static int bfly_16(int x) { for (int k = 0; k < 19; k++) x = x * 23 + (x >> 3); return x; }
static int bfly_17(int x) { for (int k = 0; k < 20; k++) x = x * 24 + (x >> 4); return x; }
static int bfly_18(int x) { for (int k = 0; k < 21; k++) x = x * 25 + (x >> 5); return x; }
static int bfly_19(int x) { for (int k = 0; k < 22; k++) x = x * 26 + (x >> 6); return x; }
static int bfly_20(int x) { for (int k = 0; k < 23; k++) x = x * 27 + (x >> 7); return x; }
static int bfly_21(int x) { for (int k = 0; k < 24; k++) x = x * 28 + (x >> 1); return x; }
static int bfly_22(int x) { for (int k = 0; k < 25; k++) x = x * 29 + (x >> 2); return x; }
static int bfly_23(int x) { for (int k = 0; k < 26; k++) x = x * 30 + (x >> 3); return x; }
static int bfly_24(int x) { for (int k = 0; k < 27; k++) x = x * 31 + (x >> 4); return x; }
static int bfly_25(int x) { for (int k = 0; k < 28; k++) x = x * 32 + (x >> 5); return x; }
static int bfly_26(int x) { for (int k = 0; k < 29; k++) x = x * 33 + (x >> 6); return x; }
static int bfly_27(int x) { for (int k = 0; k < 30; k++) x = x * 34 + (x >> 7); return x; }
static int bfly_28(int x) { for (int k = 0; k < 31; k++) x = x * 35 + (x >> 1); return x; }
static int bfly_29(int x) { for (int k = 0; k < 32; k++) x = x * 36 + (x >> 2); return x; }
static int bfly_30(int x) { for (int k = 0; k < 33; k++) x = x * 37 + (x >> 3); return x; }
static int bfly_31(int x) { for (int k = 0; k < 34; k++) x = x * 38 + (x >> 4); return x; }
static int bfly_32(int x) { for (int k = 0; k < 35; k++) x = x * 39 + (x >> 5); return x; }
static int bfly_33(int x) { for (int k = 0; k < 36; k++) x = x * 40 + (x >> 6); return x; }
static int bfly_34(int x) { for (int k = 0; k < 37; k++) x = x * 41 + (x >> 7); return x; }
static int bfly_35(int x) { for (int k = 0; k < 38; k++) x = x * 42 + (x >> 1); return x; }
static int bfly_36(int x) { for (int k = 0; k < 39; k++) x = x * 43 + (x >> 2); return x; }
static int bfly_37(int x) { for (int k = 0; k < 40; k++) x = x * 44 + (x >> 3); return x; }
static int bfly_38(int x) { for (int k = 0; k < 41; k++) x = x * 45 + (x >> 4); return x; }
static int bfly_39(int x) { for (int k = 0; k < 42; k++) x = x * 46 + (x >> 5); return x; }
static int bfly_40(int x) { for (int k = 0; k < 43; k++) x = x * 47 + (x >> 6); return x; }
static int bfly_41(int x) { for (int k = 0; k < 44; k++) x = x * 48 + (x >> 7); return x; }
static int bfly_42(int x) { for (int k = 0; k < 45; k++) x = x * 49 + (x >> 1); return x; }
static int bfly_43(int x) { for (int k = 0; k < 46; k++) x = x * 50 + (x >> 2); return x; }
static int bfly_44(int x) { for (int k = 0; k < 47; k++) x = x * 51 + (x >> 3); return x; }
static int bfly_45(int x) { for (int k = 0; k < 48; k++) x = x * 52 + (x >> 4); return x; }
static int bfly_46(int x) { for (int k = 0; k < 49; k++) x = x * 53 + (x >> 5); return x; }
static int bfly_47(int x) { for (int k = 0; k < 50; k++) x = x * 54 + (x >> 6); return x; }
static int bfly_48(int x) { for (int k = 0; k < 51; k++) x = x * 55 + (x >> 7); return x; }
static int bfly_49(int x) { for (int k = 0; k < 52; k++) x = x * 56 + (x >> 1); return x; }
static int bfly_50(int x) { for (int k = 0; k < 53; k++) x = x * 57 + (x >> 2); return x; }
static int bfly_51(int x) { for (int k = 0; k < 54; k++) x = x * 58 + (x >> 3); return x; }
static int bfly_52(int x) { for (int k = 0; k < 55; k++) x = x * 59 + (x >> 4); return x; }
static int bfly_53(int x) { for (int k = 0; k < 56; k++) x = x * 60 + (x >> 5); return x; }
static int bfly_54(int x) { for (int k = 0; k < 57; k++) x = x * 61 + (x >> 6); return x; }
static int bfly_55(int x) { for (int k = 0; k < 58; k++) x = x * 62 + (x >> 7); return x; }
static int bfly_56(int x) { for (int k = 0; k < 59; k++) x = x * 63 + (x >> 1); return x; }
static int bfly_57(int x) { for (int k = 0; k < 60; k++) x = x * 64 + (x >> 2); return x; }
static int bfly_58(int x) { for (int k = 0; k < 61; k++) x = x * 65 + (x >> 3); return x; }
static int bfly_59(int x) { for (int k = 0; k < 62; k++) x = x * 66 + (x >> 4); return x; }
static int bfly_60(int x) { for (int k = 0; k < 63; k++) x = x * 67 + (x >> 5); return x; }
static int bfly_61(int x) { for (int k = 0; k < 64; k++) x = x * 68 + (x >> 6); return x; }
static int bfly_62(int x) { for (int k = 0; k < 65; k++) x = x * 69 + (x >> 7); return x; }
static int bfly_63(int x) { for (int k = 0; k < 66; k++) x = x * 70 + (x >> 1); return x; }
static int bfly_64(int x) { for (int k = 0; k < 67; k++) x = x * 71 + (x >> 2); return x; }
static int bfly_65(int x) { for (int k = 0; k < 68; k++) x = x * 72 + (x >> 3); return x; }
static int bfly_66(int x) { for (int k = 0; k < 69; k++) x = x * 73 + (x >> 4); return x; }
static int bfly_67(int x) { for (int k = 0; k < 70; k++) x = x * 74 + (x >> 5); return x; }
static int bfly_68(int x) { for (int k = 0; k < 71; k++) x = x * 75 + (x >> 6); return x; }
static int bfly_69(int x) { for (int k = 0; k < 72; k++) x = x * 76 + (x >> 7); return x; }
static int bfly_70(int x) { for (int k = 0; k < 73; k++) x = x * 77 + (x >> 1); return x; }
static int bfly_71(int x) { for (int k = 0; k < 74; k++) x = x * 78 + (x >> 2); return x; }
static int bfly_72(int x) { for (int k = 0; k < 75; k++) x = x * 79 + (x >> 3); return x; }
static int bfly_73(int x) { for (int k = 0; k < 76; k++) x = x * 80 + (x >> 4); return x; }
static int bfly_74(int x) { for (int k = 0; k < 77; k++) x = x * 81 + (x >> 5); return x; }
static int bfly_75(int x) { for (int k = 0; k < 78; k++) x = x * 82 + (x >> 6); return x; }
static int bfly_76(int x) { for (int k = 0; k < 79; k++) x = x * 83 + (x >> 7); return x; }
static int bfly_77(int x) { for (int k = 0; k < 80; k++) x = x * 84 + (x >> 1); return x; }
static int bfly_78(int x) { for (int k = 0; k < 81; k++) x = x * 85 + (x >> 2); return x; }
static int bfly_79(int x) { for (int k = 0; k < 82; k++) x = x * 86 + (x >> 3); return x; }
int (*const fft_butterflies[])(int) = {
    bfly_0, bfly_1, bfly_2, bfly_3, bfly_4, bfly_5, bfly_6, bfly_7,
    bfly_8, bfly_9, bfly_10, bfly_11, bfly_12, bfly_13, bfly_14, bfly_15,
    bfly_16, bfly_17, bfly_18, bfly_19, bfly_20, bfly_21, bfly_22, bfly_23,
    bfly_24, bfly_25, bfly_26, bfly_27, bfly_28, bfly_29, bfly_30, bfly_31,
    bfly_32, bfly_33, bfly_34, bfly_35, bfly_36, bfly_37, bfly_38, bfly_39,
    bfly_40, bfly_41, bfly_42, bfly_43, bfly_44, bfly_45, bfly_46, bfly_47,
    bfly_48, bfly_49, bfly_50, bfly_51, bfly_52, bfly_53, bfly_54, bfly_55,
    bfly_56, bfly_57, bfly_58, bfly_59, bfly_60, bfly_61, bfly_62, bfly_63,
    bfly_64, bfly_65, bfly_66, bfly_67, bfly_68, bfly_69, bfly_70, bfly_71,
    bfly_72, bfly_73, bfly_74, bfly_75, bfly_76, bfly_77, bfly_78, bfly_79
};

int op_fft(int x)
{
    return fft_butterflies[x & 63](x);
}

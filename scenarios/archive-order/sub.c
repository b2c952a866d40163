int op_sub(int a, int b)
{
    return a - b;
}

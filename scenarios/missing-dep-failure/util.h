int square(int x);

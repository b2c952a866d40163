/* a tiny canonical-Huffman code length counter */
int huff_lengths(const unsigned *freq, int n, unsigned char *len) {
    int i, total = 0;
    for (i = 0; i < n; i++) {
        unsigned f = freq[i], l = 1;
        while (f > 1 && l < 15) { f >>= 1; l++; }
        len[i] = (unsigned char)(16 - l);
        total += len[i];
    }
    return total;
}

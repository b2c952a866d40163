/* CRC-32 (IEEE), bit by bit */
unsigned crc32_update(unsigned crc, const unsigned char *p, int n) {
    crc = ~crc;
    while (n--) {
        int k;
        crc ^= *p++;
        for (k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & -(crc & 1));
    }
    return ~crc;
}

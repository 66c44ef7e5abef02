/*
 * core/format/checksum.c - the checksum of engine files (see format.h).
 * Self-contained, so that tests can compile it in to craft files.
 */
#include <config.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

uint64_t mica__checksum(const unsigned char *p, size_t n);

/*
 * The checksum of an engine's contents: four lanes of 64-bit words,
 * multiplied and rotated (in the manner of xxHash64), folded with the
 * length and the tail bytes.  A few GB/s, so that checking 100 MB of
 * weights costs milliseconds; it detects damage, it does not resist
 * forgery.
 */
#define P1 11400714785074694791ull
#define P2 14029467366897019727ull

static uint64_t rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

uint64_t mica__checksum(const unsigned char *p, size_t n)
{
    uint64_t lane[4] = {P1 + P2, P2, 0, -P1}, h, w;
    size_t i = 0, k;

    for (; i + 32 <= n; i += 32)
        for (k = 0; k < 4; k++) {
            memcpy(&w, p + i + 8 * k, 8);
            lane[k] = rotl(lane[k] + w * P2, 31) * P1;
        }
    h = rotl(lane[0], 1) + rotl(lane[1], 7) + rotl(lane[2], 12) +
        rotl(lane[3], 18) + (uint64_t)n;
    for (; i < n; i++)
        h = rotl(h ^ (p[i] * P1), 11) * P2;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    return h;
}

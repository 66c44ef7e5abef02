/*
 * fuzz/engine_fix.c - make mutated engine bytes pass the header's length
 * and checksum (core/format/format.h: 8 bytes of magic, u32 format, u32
 * ABI version, u64 payload bytes, u64 checksum of the payload), so that
 * the engine fuzzer gets past them.  core/format/checksum.c is compiled
 * in.  A rewrite of the engine header brings its own helper; this one
 * follows format 3's.
 */
#include <config.h>

#include <stdint.h>
#include <string.h>

uint64_t mica__checksum(const unsigned char *p, size_t n);
void mica__fuzz_engine_fix(uint8_t *data, size_t size);

static void put_u64(uint8_t *p, uint64_t v)
{
    int i;
    for (i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void mica__fuzz_engine_fix(uint8_t *data, size_t size)
{
    if (size < 32 || memcmp(data, "MICAENG", 8) != 0)
        return;
    put_u64(data + 16, (uint64_t)(size - 32));
    put_u64(data + 24, mica__checksum(data + 32, size - 32));
}

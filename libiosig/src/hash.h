/* SPDX-License-Identifier: MIT */
/*
 * hash.h - hashes of strings: the deterministic names of global data files
 * (redirect.c) and the sets that find repeated keys (strset.c).  Not for
 * anything that must resist an adversary choosing the input.  Private.
 */
#ifndef IOSIG_HASH_H
#define IOSIG_HASH_H

#include <stdint.h>

/* FNV-1a over a string, continuing from h (0xcbf29ce484222325 to start). */
static inline uint64_t hash_fnv1a(const char *s, uint64_t h)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* splitmix64's finaliser: every input bit affects every output bit. */
static inline uint64_t hash_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

#endif /* IOSIG_HASH_H */

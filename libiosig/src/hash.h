/* SPDX-License-Identifier: MIT */
/*
 * hash.h - hashes of strings, for the deterministic names of global data
 * files (redirect.c) and the sets that find repeated keys (strset.c), not
 * for anything that must resist an adversary choosing the input; and
 * unpredictable numbers, for the names nobody else may guess (data files,
 * data directories, temporary files).  Private.
 */
#ifndef IOSIG_HASH_H
#define IOSIG_HASH_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

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

/* 64 unpredictable bits (getrandom; a time/pid/counter mix if it fails). */
static inline uint64_t hash_random64(void)
{
	static _Atomic uint64_t counter;
	struct timespec ts;
	uint64_t v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return hash_mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
			  ((uint64_t)getpid() << 16) ^ atomic_fetch_add(&counter, 1) ^ (uintptr_t)&v);
}

#endif /* IOSIG_HASH_H */

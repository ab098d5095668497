/* SPDX-License-Identifier: MIT */
/*
 * strset.h - a set of strings with an index each, to find the first
 * repeated key of a long list in linear time (the mounts of a configuration
 * or a probe cache).  The strings are not copied.  Private.
 */
#ifndef IOSIG_STRSET_H
#define IOSIG_STRSET_H

#include <stdbool.h>
#include <stddef.h>

struct strset {
	size_t cap;                  /* slots: a power of two, at least twice the keys */
	struct strset_slot {
		const char *key;     /* NULL: empty */
		size_t index;        /* what the caller gave with the key */
	} *slots;
};

/* An empty set for up to `n` keys.  0 or -ENOMEM. */
int strset_init(struct strset *set, size_t n);

/*
 * Adds `key` (which must outlive the set) with `index`.  True if added;
 * false if an equal key is in the set already, whose index then goes to
 * *ret_index.  At most the `n` keys of strset_init() may be added.
 */
bool strset_add(struct strset *set, const char *key, size_t index, size_t *ret_index);

/* Frees the slots (not the keys).  Accepts a zeroed set. */
void strset_free(struct strset *set);

#endif /* IOSIG_STRSET_H */

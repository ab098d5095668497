/* SPDX-License-Identifier: MIT */
/* strset.c - a set of strings with open addressing (strset.h). */
#include "strset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

int strset_init(struct strset *set, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n)
		cap *= 2;
	set->slots = calloc(cap, sizeof(*set->slots));
	set->cap = set->slots ? cap : 0;
	return set->slots ? 0 : -ENOMEM;
}

bool strset_add(struct strset *set, const char *key, size_t index, size_t *ret_index)
{
	size_t i = (size_t)hash_mix64(hash_fnv1a(key, 0xcbf29ce484222325ull)) & (set->cap - 1);

	/* Linear probing; the table is at most half full, so a free slot is
	 * near. */
	while (set->slots[i].key) {
		if (!strcmp(set->slots[i].key, key)) {
			*ret_index = set->slots[i].index;
			return false;
		}
		i = (i + 1) & (set->cap - 1);
	}
	set->slots[i].key = key;
	set->slots[i].index = index;
	return true;
}

void strset_free(struct strset *set)
{
	free(set->slots);
	set->slots = NULL;
	set->cap = 0;
}

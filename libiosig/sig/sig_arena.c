/* SPDX-License-Identifier: MIT */
/*
 * sig_arena.c - memory of parsed pragmas: one arena per pragma, so that a
 * pragma, its parameters, expression trees and strings are freed at once by
 * iosig_pragma_free().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sig_internal.h"

#define SIGP_CHUNK_SIZE 4096

struct sigp_chunk {
	struct sigp_chunk *next;  /* older chunk */
	size_t used;              /* bytes of data[] handed out */
	size_t size;              /* bytes of data[] */
	max_align_t data[];
};

void *sigp_alloc(struct sigp_arena *arena, size_t size)
{
	const size_t align = _Alignof(max_align_t);
	struct sigp_chunk *c = arena->head;
	size_t need = (size + align - 1) & ~(align - 1);
	void *p;

	if (size == 0 || need < size)
		need = align;
	if (!c || c->size - c->used < need) {
		size_t csize = need > SIGP_CHUNK_SIZE ? need : SIGP_CHUNK_SIZE;

		if (csize > SIZE_MAX - sizeof(*c))
			return NULL;
		c = malloc(sizeof(*c) + csize);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = csize;
		/* A big one-off block goes behind the current chunk so that the
		 * current chunk's free space stays usable. */
		if (arena->head && csize > SIGP_CHUNK_SIZE) {
			c->next = arena->head->next;
			arena->head->next = c;
		} else {
			c->next = arena->head;
			arena->head = c;
		}
	}
	p = (char *)c->data + c->used;
	c->used += need;
	memset(p, 0, size);
	return p;
}

char *sigp_strndup(struct sigp_arena *arena, const char *s, size_t n)
{
	char *d = sigp_alloc(arena, n + 1);

	if (!d)
		return NULL;
	if (n)
		memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

void sigp_arena_free(struct sigp_arena *arena)
{
	struct sigp_chunk *c = arena->head;

	while (c) {
		struct sigp_chunk *next = c->next;

		free(c);
		c = next;
	}
	arena->head = NULL;
}

struct sigp_pragma *sigp_pragma_new(enum iosig_pragma_kind kind)
{
	struct sigp_pragma *p = calloc(1, sizeof(*p));

	if (p)
		p->pub.kind = kind;
	return p;
}

void iosig_pragma_free(struct iosig_pragma *pragma)
{
	struct sigp_pragma *p;

	if (!pragma)
		return;
	p = sigp_pragma_of(pragma);
	sigp_arena_free(&p->arena);
	free(p);
}

struct iosig_expr *sigp_expr_copy(struct sigp_arena *arena, const struct iosig_expr *e)
{
	struct iosig_expr *c;

	if (!e)
		return NULL;
	c = sigp_alloc(arena, sizeof(*c));
	if (!c)
		return NULL;
	*c = *e;
	c->lhs = c->rhs = NULL;
	c->args = NULL;
	if (e->text) {
		c->text = sigp_strndup(arena, e->text, strlen(e->text));
		if (!c->text)
			return NULL;
	}
	if (e->lhs && !(c->lhs = sigp_expr_copy(arena, e->lhs)))
		return NULL;
	if (e->rhs && !(c->rhs = sigp_expr_copy(arena, e->rhs)))
		return NULL;
	if (e->nargs) {
		const struct iosig_expr **args = sigp_alloc(arena, e->nargs * sizeof(*args));

		if (!args)
			return NULL;
		for (unsigned i = 0; i < e->nargs; i++) {
			args[i] = sigp_expr_copy(arena, e->args[i]);
			if (!args[i])
				return NULL;
		}
		c->args = args;
	}
	return c;
}

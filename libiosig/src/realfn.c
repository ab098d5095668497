/* SPDX-License-Identifier: MIT */
/*
 * realfn.c - the functions beneath an interposer and the runtime's guard (see
 * realfn.h).  Linked into every object that holds interposers; the copy in
 * each object looks up the definitions that come after that object.
 */
#include "realfn.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>

__attribute__((visibility("default"))) __thread unsigned iosig_real_busy
	__attribute__((tls_model("initial-exec")));

void *real_get(struct real_fn *f)
{
	void *p = atomic_load_explicit(&f->fn, memory_order_acquire);

	if (__builtin_expect(p != NULL, 1))
		return p;
	/* dlsym may open files (a locale, a debug map): not through us. */
	real_enter();
	p = dlsym(RTLD_NEXT, f->name);
	real_leave();
	if (p)
		atomic_store_explicit(&f->fn, p, memory_order_release);
	return p;
}

/* SPDX-License-Identifier: MIT */
/*
 * iosig-redirect.c - runs a program nobody can recompile with I/O
 * signatures given per path or glob (IOSIG paper, Sect. 6.2): the rules go
 * to the program through the environment, the LD_PRELOAD library
 * (preload.c) applies them to the program's opens, and iosig-redirect
 * execs the program in its own place, like env(1), so the program's exit
 * status and signals are its own.  `prepare` and `finalize` (prepare.c) do
 * the same for programs the preload library cannot reach.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "env.h"
#include "iosig.h"

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: iosig-redirect [OPTIONS] [-s 'SIG' PATH]... [-r RULES]... [--] PROGRAM [ARGS...]\n"
		"       iosig-redirect prepare [OPTIONS] [-s 'SIG' PATH]... [-r RULES]... [PATH...]\n"
		"       iosig-redirect finalize [OPTIONS] PATH...\n"
		"\n"
		"Runs PROGRAM with I/O signatures applied to the files it creates: a file\n"
		"whose path matches a rule is created on the mount that suits its signature\n"
		"best and linked where the program asked (IOSIG, Sect. 6.2).  Children and\n"
		"programs PROGRAM executes inherit the rules.  Statically linked programs:\n"
		"'prepare' places the links before the run, 'finalize' moves the data back.\n"
		"\n"
		"Rules (tried in the order given; the first match wins):\n"
		"  -s, --sig 'SIG' PATH  files at PATH, a glob ('*', '?', [...], '**' for any\n"
		"                        depth; relative to the working directory), get SIG,\n"
		"                        e.g. -s 'tmp random size_per_io(4KiB)' '/scratch/**'\n"
		"  -r, --rules FILE      rules and named signatures from a YAML file\n"
		"                        (iosig-rules(5))\n"
		"\n"
		"Options:\n"
		"  -n, --dry-run         decide and log, never redirect (log to stderr\n"
		"                        unless --log)\n"
		"      --log FILE        append the decision log (JSON lines) to FILE or\n"
		"                        'stderr' (IOSIG_LOG)\n"
		"      --config FILE     catalog configuration (IOSIG_CONFIG)\n"
		"      --check           check every rule against the catalog before PROGRAM\n"
		"                        runs (else the first open a rule matches does)\n"
		"      --strict          stop when a rule's signature cannot be satisfied\n"
		"                        here, and fail opens when none can (IOSIG_STRICT)\n"
		"  -q, --quiet           no warnings (IOSIG_QUIET for the program)\n"
		"  -h, --help            this help\n"
		"      --version         the version\n"
		"\n"
		"Exit status: PROGRAM's; 125 when iosig-redirect itself fails (options,\n"
		"rules, catalog), 126 when PROGRAM cannot be executed, 127 when it is not\n"
		"found.  Environment: IOSIG_PRELOAD (the preload library to use),\n"
		"IOSIG_CONFIG, IOSIG_LOG.  See iosig-redirect(1), iosig-rules(5).\n");
}

/* ------------------------------------------------------------------------
 * The program
 * ---------------------------------------------------------------------- */

/*
 * Finds PROGRAM the way execvp(3) does: a name with '/' as is, else the
 * first executable regular file in $PATH.  RX_OK with the path in buf,
 * RX_NOT_FOUND or RX_CANNOT_RUN (with errno-like *ret_err).
 */
static int find_program(const char *name, char *buf, size_t size, int *ret_err)
{
	const char *path = env_get("PATH"), *p;
	bool denied = false;
	struct stat st;

	if (!*name) {
		*ret_err = ENOENT;
		return RX_NOT_FOUND;
	}
	if (strchr(name, '/')) {
		snprintf(buf, size, "%s", name);
		if (stat(buf, &st)) {
			*ret_err = errno;
			return errno == ENOENT || errno == ENOTDIR ? RX_NOT_FOUND : RX_CANNOT_RUN;
		}
		if (S_ISDIR(st.st_mode) || access(buf, X_OK)) {
			*ret_err = S_ISDIR(st.st_mode) ? EISDIR : errno;
			return RX_CANNOT_RUN;
		}
		return RX_OK;
	}
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p++) {
		const char *e = strchrnul(p, ':');
		int n = e == p ? snprintf(buf, size, "%s", name) :
				 snprintf(buf, size, "%.*s/%s", (int)(e - p), p, name);

		if (n > 0 && (size_t)n < size && !stat(buf, &st) && !S_ISDIR(st.st_mode)) {
			if (!access(buf, X_OK))
				return RX_OK;
			denied = true;
		}
		if (!*e)
			break;
		p = e;
	}
	*ret_err = denied ? EACCES : ENOENT;
	return denied ? RX_CANNOT_RUN : RX_NOT_FOUND;
}

/* What the ELF header of a program says about LD_PRELOAD. */
enum elf_kind { ELF_DYNAMIC, ELF_STATIC, ELF_32, ELF_OTHER };

/* Reads the program headers: an ELF executable without PT_INTERP is
 * statically linked (LD_PRELOAD never reaches it); a 32-bit one cannot load
 * the (64-bit) library.  Scripts and anything unreadable are ELF_OTHER. */
static enum elf_kind elf_kind(const char *path)
{
	enum elf_kind kind = ELF_OTHER;
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return ELF_OTHER;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		goto out_close_fd;
	if (eh.e_ident[EI_CLASS] == ELFCLASS32) {
		kind = ELF_32;
		goto out_close_fd;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 4096)
		goto out_close_fd;
	kind = ELF_STATIC;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph)) {
			kind = ELF_OTHER;
			break;
		}
		if (ph.p_type == PT_INTERP) {
			kind = ELF_DYNAMIC;
			break;
		}
	}
out_close_fd:
	close(fd);
	return kind;
}

char **rx_argv;

void rx_install_path(const char *build, const char *installed, const char *rel, char *buf,
		     size_t size)
{
	char exe[PATH_MAX], *slash;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	slash = strrchr(exe, '/');
	if (slash && (size_t)(slash - exe) == strlen(IOSIG_REDIRECT_BUILD_DIR) &&
	    !strncmp(exe, IOSIG_REDIRECT_BUILD_DIR, (size_t)(slash - exe))) {
		snprintf(buf, size, "%s", build);
		return;
	}
	snprintf(buf, size, "%s", installed);
	if (slash && rel[0] != '/') {
		char path[PATH_MAX * 2], real[PATH_MAX];

		*slash = '\0';
		snprintf(path, sizeof(path), "%s/%s/%s", exe, RX_TO_PREFIX, rel);
		if (realpath(path, real))
			snprintf(buf, size, "%s", real);
	}
}

/*
 * The preload library: $IOSIG_PRELOAD; else the one built next to this
 * executable when it runs from the build tree; else the installed one:
 * LIBDIR/libiosig-preload.so of the prefix this executable is installed in,
 * which is the path fixed at build time unless the installation was moved
 * or installed with another prefix.
 */
static int preload_path(struct cli *c, char *buf, size_t size)
{
	const char *env = env_get(RX_PRELOAD_ENV);
	char core[PATH_MAX * 2], *slash;

	if (env && *env)
		snprintf(buf, size, "%s", env);
	else
		rx_install_path(IOSIG_PRELOAD_BUILD, IOSIG_PRELOAD_INSTALLED,
				IOSIG_INSTALL_LIBDIR "/" IOSIG_PRELOAD_NAME, buf, size);
	if (buf[0] != '/' || strpbrk(buf, ": \t")) {
		cli_err(c, "preload library '%s': LD_PRELOAD needs an absolute path without ':' or blanks; set %s to one",
			buf, RX_PRELOAD_ENV);
		return RX_OWN;
	}
	if (access(buf, R_OK)) {
		cli_err(c, "preload library %s: %s; reinstall iosig or set %s to libiosig-preload.so",
			buf, strerror(errno), RX_PRELOAD_ENV);
		return RX_OWN;
	}
	/* Its other half, loaded from the same directory when a rule matches. */
	slash = strrchr(buf, '/');
	snprintf(core, sizeof(core), "%.*s/%s", (int)(slash - buf), buf, IOSIG_PRELOAD_CORE_NAME);
	if (access(core, R_OK)) {
		cli_err(c, "preload library %s: %s; it must be next to %s (reinstall iosig)", core,
			strerror(errno), buf);
		return RX_OWN;
	}
	return RX_OK;
}

/* True if `lib` is already one of the entries of LD_PRELOAD (separated by
 * ':' or blanks, as ld.so reads them). */
static bool preload_has(const char *list, const char *lib)
{
	size_t n = strlen(lib);

	for (const char *p = list; *p;) {
		size_t k = strcspn(p, ": \t");

		if (k == n && !strncmp(p, lib, n))
			return true;
		p += k;
		p += strspn(p, ": \t");
	}
	return false;
}

/* Puts the rules and the library into the environment of PROGRAM, keeping
 * the LD_PRELOAD entries already there (ours goes last, so that a library
 * that must come first, such as a sanitizer runtime, still does). */
static int set_environment(struct cli *c, const char *lib)
{
	const char *old = env_get("LD_PRELOAD");
	char *text = NULL, *list;
	int r = RX_OWN;

	if (rules_encode(c->rs, &text) < 0) {
		cli_err(c, "out of memory");
		return RX_OWN;
	}
	if (strlen(text) > RULES_ENV_MAX) {
		cli_err(c, "the rules take %zu bytes compiled, more than the %u the environment can carry: use fewer or shorter patterns",
			strlen(text), RULES_ENV_MAX);
		goto out_free_text;
	}
	if (setenv(RULES_ENV, text, 1)) {
		cli_err(c, "cannot set %s: %s", RULES_ENV, strerror(errno));
		goto out_free_text;
	}
	if (old && *old && preload_has(old, lib)) {
		r = RX_OK;
		goto out_free_text;
	}
	list = malloc((old ? strlen(old) : 0) + strlen(lib) + 2);
	if (!list) {
		cli_err(c, "out of memory");
		goto out_free_text;
	}
	if (old && *old)
		sprintf(list, "%s:%s", old, lib);
	else
		strcpy(list, lib);
	if (setenv("LD_PRELOAD", list, 1))
		cli_err(c, "cannot set LD_PRELOAD: %s", strerror(errno));
	else
		r = RX_OK;
	free(list);
out_free_text:
	free(text);
	return r;
}

static int run_program(int argc, char **argv)
{
	char path[PATH_MAX], lib[PATH_MAX];
	const char *inherited;
	struct cli c;
	struct stat st;
	int i, r, err = 0;

	r = cli_init(&c, NULL);
	if (r)
		return r;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || !a[1])
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			r = RX_OK;
			goto out_done;
		}
		if (!strcmp(a, "--version")) {
			printf("iosig-redirect %s\n", iosig_version());
			r = RX_OK;
			goto out_done;
		}
		r = cli_option(&c, argc, argv, &i);
		if (r < 0) {
			r = -r;
			goto out_done;
		}
		if (r == 0) {
			r = cli_usage(&c, "unknown option '%s' (a PROGRAM starting with '-' goes after '--')", a);
			goto out_done;
		}
	}
	if (i >= argc) {
		r = cli_usage(&c, "no PROGRAM to run: iosig-redirect -s 'SIG' PATH -- PROGRAM [ARGS...]");
		goto out_done;
	}
	if (!c.nsig && !c.nfiles) {
		r = cli_usage(&c, "no rules: give -s 'SIG' PATH or -r RULES, or PROGRAM runs unchanged");
		goto out_done;
	}
	c.own_rules = c.rs->n;
	/* Inside another iosig-redirect: its rules still apply, after ours. */
	inherited = env_get(RULES_ENV);
	if (inherited && *inherited) {
		struct iosig_error e = { 0 };

		if (rules_decode(c.rs, inherited, strlen(inherited), &e) < 0)
			cli_warn(&c, "%s from an outer iosig-redirect is not valid (%s): its rules no longer apply",
				 RULES_ENV, e.msg);
	}
	r = cli_finish(&c);
	if (r)
		goto out_done;

	r = find_program(argv[i], path, sizeof(path), &err);
	if (r) {
		cli_err(&c, "'%s': %s", argv[i], strerror(err));
		goto out_done;
	}
	switch (elf_kind(path)) {
	case ELF_STATIC:
		if (c.strict) {
			cli_err(&c, "%s is statically linked: LD_PRELOAD cannot reach its opens; use 'iosig-redirect prepare' before and 'iosig-redirect finalize' after the run",
				path);
			r = RX_OWN;
			goto out_done;
		}
		cli_warn(&c, "%s is statically linked: LD_PRELOAD cannot reach its opens, no rule applies; use 'iosig-redirect prepare' before and 'iosig-redirect finalize' after the run",
			 path);
		break;
	case ELF_32:
		cli_warn(&c, "%s is a 32-bit program: the 64-bit preload library cannot load into it, no rule applies; use 'iosig-redirect prepare' and 'finalize'",
			 path);
		break;
	case ELF_DYNAMIC:
		if (!stat(path, &st) && (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
					 ((st.st_mode & S_ISGID) && st.st_gid != getegid())))
			cli_warn(&c, "%s is set-user/group-ID: the dynamic linker ignores LD_PRELOAD for it, no rule applies",
				 path);
		break;
	default:
		break;
	}
	r = preload_path(&c, lib, sizeof(lib));
	if (r)
		goto out_done;
	r = set_environment(&c, lib);
	if (r)
		goto out_done;
	cli_done(&c);
	execv(path, argv + i);
	err = errno;
	fprintf(stderr, "iosig-redirect: cannot run '%s': %s\n", argv[i], strerror(err));
	return err == ENOENT ? RX_NOT_FOUND : RX_CANNOT_RUN;

out_done:
	cli_done(&c);
	return r;
}

int main(int argc, char **argv)
{
	rx_argv = argv;
	if (argc > 1 && !strcmp(argv[1], "prepare"))
		return rx_prepare(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "finalize"))
		return rx_finalize(argc - 1, argv + 1);
	return run_program(argc, argv);
}

/*
 * Declared openers on real mounts: the output opens of bzip2, gzip (through
 * gnulib's openat -> openat_safer) and the sqlite3 shell, as wrappers.h
 * reproduces them, each declared with '#pragma io opener' and annotated
 * where it is called.  Each file lands on the fast mount behind a link at
 * the path the program used; each wrapper keeps its own behaviour: bzip2's
 * exclusive 0600 create (a second create of the same name fails as it
 * would), gnulib's descriptor above the standard streams, sqlite3's names
 * "stdout" and "off", which create nothing (and leave nothing behind).
 * Each signature says how small its file is: the test's mounts are small.
 *
 * mount: work ext4 {"class": "hdd", "rotational": true, "seq_write_bw": "100MiB/s", "latency": "5ms", "seek": "8ms"}
 * mount: fast tmpfs {"class": "ram", "volatile": true, "seq_write_bw": "5GiB/s", "latency": "0.001ms"}
 * env: IOSIG_DRYRUN=
 * run: {mnt:work}
 * expect-stdout: bzip2: 6 bytes back, again: refused
 * expect-stdout: gzip: descriptor above 2, 5 bytes back
 * expect-stdout: sqlite3: 7 bytes back
 * expect-stdout: to the shell's stdout
 * expect-stdout: sqlite3 off: no stream
 * expect-log: {"call": "opener", "site": {"call": "fopen_output_safely", "line": "@+46"}, "action": "linked", "values": [65536]}
 * expect-log: {"call": "opener", "site": {"call": "openat_safer"}, "action": "linked", "path": "data.gz"}
 * expect-log: {"call": "opener", "site": {"call": "output_file_open"}, "action": "linked", "path": "{mnt:work}/query.out"}
 * expect-log: {"call": "opener", "site": {"call": "output_file_open"}, "action": "linked", "path": "stdout"}
 * expect-log-count: 2 {"event": "unlinked", "site": {"call": "output_file_open"}}
 * after: readlink {mnt:work}/data.bz2 | grep -q '^{mnt:fast}/iosig-data/'
 * after: test "$(stat -L -c %a {mnt:work}/data.bz2)" = 600
 * after: readlink {mnt:work}/data.gz | grep -q '^{mnt:fast}/iosig-data/'
 * after: readlink {mnt:work}/query.out | grep -q '^{mnt:fast}/iosig-data/'
 * after: test ! -e stdout && test ! -L stdout && test ! -L off
 * after: test "$(find {mnt:fast}/iosig-data -type f | wc -l)" = 3
 * after: {iosig} finalize {mnt:work}/data.bz2 {mnt:work}/data.gz {mnt:work}/query.out
 * after: test -z "$(find {mnt:fast}/iosig-data -mindepth 1)"
 */
#include <stdlib.h>

#include "wrappers.h"

#pragma io opener(fopen_output_safely, path(1), mode("wx"))
#pragma io opener(openat, dirfd(1), path(2), flags(3))
#pragma io opener(output_file_open, path(1), mode("w"))

/* Reads the file at path back; its size, or -1. */
static long size_back(const char *path)
{
	char buf[64];
	FILE *fp = fopen(path, "r");
	long n;

	if (!fp)
		return -1;
	n = (long)fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	return n;
}

int main(int argc, char **argv)
{
	const char *dir = argv[argc - 1];
	long block = 64 * 1024;
	char path[4096];
	FILE *fp;
	int atfd, fd;

	/* bzip2: compress() opens its output. */
	snprintf(path, sizeof(path), "%s/data.bz2", dir);
#pragma io sig tmp sequential_access size_per_io(block) totalsize(1*KiB)
	fp = fopen_output_safely(path, "wb");
	if (!fp || fputs("BZh91\n", fp) < 0 || fclose(fp))
		return 1;
	printf("bzip2: %ld bytes back", size_back(path));
#pragma io sig tmp totalsize(1*KiB)
	fp = fopen_output_safely(path, "wb");
	printf(", again: %s\n", fp ? "opened" : "refused");

	/* gzip: create_outfile() opens relative to the output's directory,
	 * with no standard input (descriptor 0 free). */
	atfd = open(dir, O_RDONLY | O_DIRECTORY);
	close(STDIN_FILENO);
#pragma io sig tmp totalsize(1*KiB)
	fd = openat(atfd, "data.gz", O_WRONLY | O_CREAT | O_EXCL, S_IRUSR | S_IWUSR);
	if (fd <= STDERR_FILENO || write(fd, "gzip\n", 5) != 5 || close(fd))
		return 2;
	snprintf(path, sizeof(path), "%s/data.gz", dir);
	printf("gzip: descriptor above 2, %ld bytes back\n", size_back(path));

	/* sqlite3: .output FILE, then .output stdout, then .output off. */
	snprintf(path, sizeof(path), "%s/query.out", dir);
#pragma io sig tmp totalsize(1*KiB)
	fp = output_file_open(path, 1);
	if (!fp || fputs("1|one\n\n", fp) < 0 || fclose(fp))
		return 3;
	printf("sqlite3: %ld bytes back\n", size_back(path));
#pragma io sig tmp totalsize(1*KiB)
	fp = output_file_open("stdout", 1);
	fprintf(fp, "to the shell's stdout\n");
#pragma io sig tmp totalsize(1*KiB)
	fp = output_file_open("off", 1);
	printf("sqlite3 off: %s\n", fp ? "a stream" : "no stream");
	return 0;
}

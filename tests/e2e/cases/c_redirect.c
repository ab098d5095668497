/*
 * Redirection on real mounts, end to end: the program writes into a slow,
 * persistent ext4 filesystem ("work"); its signatures send temporary data to
 * a tmpfs and a persistent checkpoint to an xfs filesystem, each through a
 * data file there and a symbolic link at the path the program used.  The
 * program reads its data back through the links; `iosig finalize` then
 * moves it home.  Calls that create nothing, paths that exist and
 * signatures that nothing satisfies open the path as written.
 *
 * mount: work ext4 {"class": "hdd", "rotational": true, "seq_write_bw": "100MiB/s", "latency": "5ms", "seek": "8ms"}
 * mount: fast tmpfs {"class": "ram", "volatile": true, "seq_write_bw": "5GiB/s", "latency": "0.001ms"}
 * mount: safe xfs {"class": "ssd", "rotational": false, "volatile": false, "seq_write_bw": "500MiB/s", "latency": "0.1ms"}
 * env: IOSIG_DRYRUN=
 * run: {mnt:work}
 * expect-stdout: scratch: 4096 bytes back
 * expect-stdout: checkpoint: 1048576 bytes back
 * after: readlink {mnt:work}/scratch.tmp | grep -q '^{mnt:fast}/iosig-data/'
 * after: readlink {mnt:work}/ckpt.dat | grep -q '^{mnt:safe}/iosig-data/'
 * after: test ! -L {mnt:work}/log.txt && test -f {mnt:work}/log.txt
 * after: test ! -L {mnt:work}/archive.dat && test -f {mnt:work}/archive.dat
 * after: {iosig} finalize {mnt:work}/ckpt.dat {mnt:work}/scratch.tmp
 * after: test ! -L {mnt:work}/ckpt.dat && test "$(stat -c %s {mnt:work}/ckpt.dat)" = 1048576
 * after: test ! -L {mnt:work}/scratch.tmp && test "$(stat -c %s {mnt:work}/scratch.tmp)" = 4096
 * after: test -z "$(find {mnt:safe}/iosig-data {mnt:fast}/iosig-data -mindepth 1)"
 * after: {iosig} finalize {mnt:work}/ckpt.dat
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buf[1 << 20];

/* Writes n bytes of `c` to fd, closes it, and reads them back by path. */
static int write_and_check(int fd, const char *path, size_t n, char c, const char *what)
{
	FILE *fp;
	size_t got;

	memset(buf, c, n);
	if (fd < 0 || write(fd, buf, n) != (ssize_t)n || close(fd))
		return -1;
	memset(buf, 0, n);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	got = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	for (size_t i = 0; i < got; i++)
		if (buf[i] != c)
			return -1;
	printf("%s: %zu bytes back\n", what, got);
	return got == n ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *dir = argv[argc - 1];
	char scratch[4096], ckpt[4096], log[4096], archive[4096];
	size_t chunk = 4096;
	FILE *fp;
	int fd;

	snprintf(scratch, sizeof(scratch), "%s/scratch.tmp", dir);
	snprintf(ckpt, sizeof(ckpt), "%s/ckpt.dat", dir);
	snprintf(log, sizeof(log), "%s/log.txt", dir);
	snprintf(archive, sizeof(archive), "%s/archive.dat", dir);

#pragma io sig tmp random_access size_per_io(chunk) totalsize(chunk)
	fd = open(scratch, O_CREAT | O_WRONLY | O_EXCL, 0600);
	/* expect-log: {"site": {"line": "@-2"}, "action": "redirected", "chosen": "{mnt:fast}"} */
	if (write_and_check(fd, scratch, chunk, 's', "scratch"))
		return 1;

#pragma io sig persist sequential_access size_per_io(1*MiB) totalsize(1*MiB)
	fd = creat(ckpt, 0640);
	/* expect-log: {"site": {"line": "@-2", "call": "creat"}, "action": "redirected", "chosen": "{mnt:safe}"} */
	if (write_and_check(fd, ckpt, sizeof(buf), 'c', "checkpoint"))
		return 2;

	/* The path exists now: opened as it is, through the link. */
#pragma io sig tmp
	fd = open(ckpt, O_WRONLY | O_APPEND);
	/* expect-log: {"site": {"line": "@-2"}, "action": "open"} */
	if (fd < 0 || close(fd))
		return 3;

	/* An unannotated file is left alone. */
	fp = fopen(log, "a");
	if (!fp)
		return 4;
	fclose(fp);

	/* Nothing is labelled archive: the file stays, the open works. */
#pragma io sig archive
	fp = fopen(archive, "w");
	/* expect-log: {"site": {"line": "@-2", "call": "fopen"}, "chosen": null} */
	if (!fp || fputs("kept", fp) < 0 || fclose(fp))
		return 5;

	/* A failing call fails as it would: same result, same errno. */
#pragma io sig tmp
	fd = open("/nonexistent/dir/x", O_CREAT | O_WRONLY, 0600);
	if (fd != -1 || errno != ENOENT)
		return 6;
	return 0;
}

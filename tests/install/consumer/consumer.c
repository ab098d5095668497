/* SPDX-License-Identifier: MIT */
/*
 * consumer.c - uses the installed libiosig through iosig.h only: parses a
 * signature, evaluates the models and prints results the test compares
 * with known values.
 */
#include <iosig.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	struct iosig_layout raid1 = { .kind = IOSIG_LAYOUT_RAID1, .disks = 2, .tolerated = 1 };
	struct iosig_error err;
	struct iosig_sig sig;
	char canon[256];
	double uber;

	memset(&err, 0, sizeof(err));
	if (iosig_sig_parse("persist size_per_io(64*MiB)", NULL, NULL, 0, &sig, &err) < 0) {
		fprintf(stderr, "consumer: %s\n", err.msg);
		return 1;
	}
	if (iosig_sig_format(&sig, canon, sizeof(canon)) < 0)
		return 1;
	uber = iosig_uber(1e-6, 512, 2);
	printf("version %s\n", iosig_version());
	printf("size_per_io %llu\n", (unsigned long long)sig.size_per_io);
	printf("canonical %s\n", canon);
	printf("uber %.3g\n", uber);
	/* Sect. 7.4: 1 TiB on RAID1, MTTF 10 y, MTTR 1 d: 13.0 y (paper: ~12). */
	printf("raid1 1TiB years %.0f\n",
	       iosig_mttdl(&raid1, 10 * 365 * 86400.0, 86400, uber, 1099511627776.0) / (365 * 86400.0));
	return 0;
}

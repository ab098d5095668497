/* SPDX-License-Identifier: MIT */
/*
 * disk_text.h - the part of the tests' synthetic DiskSim drives after the
 * layout: an HPL seek curve, 0.5 ms head switches, 6000 rpm, fixed
 * controller overheads and no cache (no '%': usable in printf formats).
 */
#ifndef IOSIG_TESTS_SIM_DISK_TEXT_H
#define IOSIG_TESTS_SIM_DISK_TEXT_H

#define TEST_DISK_MECHANICS                                                            \
	"      Mechanical Model = dm_mech_g1 {\n"                                      \
	"         Access time type = trackSwitchPlusRotation,\n"                       \
	"         Seek type = hpl,\n"                                                  \
	"         Single cylinder seek time = 1.0,\n"                                  \
	"         HPL seek equation values = [ 50, 1, 0.1, 2, 0.01, 1 ],\n"            \
	"         Head switch time = 0.5,\n"                                           \
	"         Rotation speed (in rpms) = 6000\n"                                   \
	"      }\n"                                                                    \
	"   },\n"                                                                      \
	"   Bulk sector transfer time = 0.01,\n"                                       \
	"   Read hit over. after read = 0.1, Read hit over. after write = 0.1,\n"      \
	"   Read miss over. after read = 0.5, Read miss over. after write = 0.5,\n"    \
	"   Write hit over. after read = 0.2, Write hit over. after write = 0.2,\n"    \
	"   Write miss over. after read = 0.3, Write miss over. after write = 0.3,\n"  \
	"   Number of buffer segments = 0,\n"                                          \
	"   Segment size (in blks) = 0\n"

#endif /* IOSIG_TESTS_SIM_DISK_TEXT_H */

/* SPDX-License-Identifier: MIT */
/*
 * comma_locale.h - for unit tests that check output does not depend on the
 * process locale: switch to a locale whose decimal separator is a comma.
 *
 * Minimal systems install no such locale, so comma_locale_prepare() compiles
 * de_DE.UTF-8 into a private directory that LOCPATH points to (localedef);
 * comma_locale_cleanup() removes it.  Call them from a group setup/teardown,
 * or pass comma_locale_group_setup/_teardown to cmocka_run_group_tests().
 */
#ifndef IOSIG_TEST_COMMA_LOCALE_H
#define IOSIG_TEST_COMMA_LOCALE_H

#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char comma_locale_dir[] = "/tmp/iosig-locale-XXXXXX";
static bool comma_locale_dir_made;

static void comma_locale_prepare(void)
{
	char cmd[256];

	if (!setlocale(LC_ALL, "de_DE.UTF-8") && mkdtemp(comma_locale_dir)) {
		comma_locale_dir_made = true;
		snprintf(cmd, sizeof(cmd), "localedef -c -i de_DE -f UTF-8 %s/de_DE.UTF-8 "
			 ">/dev/null 2>&1", comma_locale_dir);
		if (system(cmd) == 0)
			setenv("LOCPATH", comma_locale_dir, 1);
	}
	setlocale(LC_ALL, "C");
}

static void comma_locale_cleanup(void)
{
	char cmd[256];

	setlocale(LC_ALL, "C");
	if (comma_locale_dir_made) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", comma_locale_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", comma_locale_dir);
		comma_locale_dir_made = false;
	}
}

/* cmocka group fixtures that do just that. */
static inline int comma_locale_group_setup(void **state)
{
	(void)state;
	comma_locale_prepare();
	return 0;
}

static inline int comma_locale_group_teardown(void **state)
{
	(void)state;
	comma_locale_cleanup();
	return 0;
}

/* Switches the process to a locale with a decimal comma; false if none can be
 * had (the caller then says so and checks the C locale only). */
static bool comma_locale_set(void)
{
	static const char *const locales[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
					       "de_DE", "ru_RU.UTF-8" };
	char buf[16];

	for (size_t i = 0; i < sizeof(locales) / sizeof(locales[0]); i++) {
		if (setlocale(LC_ALL, locales[i])) {
			snprintf(buf, sizeof(buf), "%.1f", 0.5);
			if (strcmp(buf, "0,5") == 0) /* really a comma locale */
				return true;
		}
	}
	setlocale(LC_ALL, "C");
	return false;
}

#endif /* IOSIG_TEST_COMMA_LOCALE_H */

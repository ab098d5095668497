/* SPDX-License-Identifier: MIT */
/*
 * catalog_yaml.c - reading the YAML files of the catalog and its tools (the
 * configuration, the probe cache, iosig-redirect's rules): the whole file
 * with a size limit, the one document in it with a depth limit, the text of
 * scalars, and errors at a node in one format (file:line:column, the key,
 * what was expected, a did-you-mean).  The schemas themselves live with
 * their files (config.c, probe_cache.c, rules_file.c).
 */
#include "catalog_yaml.h"
#include "sig_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *cat_suggest(const char *word, const char *const *names, size_t n)
{
	return sigp_suggest(word, strlen(word), names, n);
}

int cat_yaml_err(struct cat_yaml *p, const yaml_node_t *node, const char *fmt, ...)
{
	va_list ap;
	char msg[sizeof(((struct iosig_error *)0)->msg)];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->err) {
		cat_error(p->err, p->file, node ? (int)node->start_mark.line + 1 : 0,
			  node ? (int)node->start_mark.column + 1 : 0, "%s", msg);
		if (node) {
			p->err->offset = node->start_mark.index;
			p->err->length = node->end_mark.index > node->start_mark.index ?
						 node->end_mark.index - node->start_mark.index :
						 1;
		}
	}
	return -EINVAL;
}

const char *cat_yaml_kind(const yaml_node_t *node)
{
	switch (node->type) {
	case YAML_MAPPING_NODE:
		return "a mapping";
	case YAML_SEQUENCE_NODE:
		return "a list";
	default:
		return "a scalar";
	}
}

const char *cat_yaml_scalar(struct cat_yaml *p, const yaml_node_t *node, const char *key,
			    const char *expect)
{
	const char *s;

	if (node->type != YAML_SCALAR_NODE) {
		cat_yaml_err(p, node, "%s: expected %s, got %s", key, expect, cat_yaml_kind(node));
		return NULL;
	}
	s = (const char *)node->data.scalar.value;
	if (strlen(s) != node->data.scalar.length) {
		cat_yaml_err(p, node, "%s: the value contains a NUL character", key);
		return NULL;
	}
	return s;
}

const char *cat_yaml_shown(const char *s, char *buf, size_t size)
{
	size_t j = 0, i = 0;

	for (; s[i] && j + 4 < size; i++)
		buf[j++] = (unsigned char)s[i] < 0x20 ? '?' : s[i];
	if (s[i])
		memcpy(buf + j, "...", 4);
	else
		buf[j] = '\0';
	return buf;
}

void cat_yaml_done(struct cat_yaml *y)
{
	if (y->loaded)
		yaml_document_delete(&y->doc);
	y->loaded = false;
}

/*
 * Refuses collections nested deeper than CAT_YAML_MAX_DEPTH before the
 * document is loaded.  libyaml's scanner re-examines every open flow level
 * for each token, so "a: [[[[..." costs time quadratic in the depth (100000
 * levels, well under the size limit, took minutes); an event pass that stops
 * at the limit reads only a bounded prefix.  Syntax errors are left to
 * yaml_parser_load(), which reports them with the same position.
 */
static int check_depth(struct cat_yaml *y, const char *buf, size_t len)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	unsigned depth = 0;
	int r = 0;

	if (!yaml_parser_initialize(&parser)) {
		cat_error(y->err, y->file, 0, 0, "out of memory");
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (yaml_parser_parse(&parser, &ev)) {
		bool end = ev.type == YAML_STREAM_END_EVENT;

		if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
			if (++depth > CAT_YAML_MAX_DEPTH) {
				cat_error(y->err, y->file, (int)ev.start_mark.line + 1,
					  (int)ev.start_mark.column + 1,
					  "lists and mappings nested more than %d deep: a "
					  "configuration needs 4 levels; check the brackets",
					  CAT_YAML_MAX_DEPTH);
				if (y->err)
					y->err->offset = ev.start_mark.index;
				r = -EINVAL;
				end = true;
			}
		} else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
			depth--;
		}
		yaml_event_delete(&ev);
		if (end)
			break;
	}
	yaml_parser_delete(&parser);
	return r;
}

int cat_yaml_load(struct cat_yaml *y, const char *buf, size_t len)
{
	yaml_parser_t parser;
	yaml_document_t extra;
	int r;

	r = check_depth(y, buf, len);
	if (r < 0)
		return r;
	if (!yaml_parser_initialize(&parser)) {
		cat_error(y->err, y->file, 0, 0, "out of memory");
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &y->doc)) {
		cat_error(y->err, y->file, (int)parser.problem_mark.line + 1,
			  (int)parser.problem_mark.column + 1, "invalid YAML: %s%s%s",
			  parser.problem ? parser.problem : "cannot parse",
			  parser.context ? " " : "", parser.context ? parser.context : "");
		if (y->err)
			y->err->offset = parser.problem_mark.index;
		r = -EINVAL;
		goto out_delete_parser;
	}
	y->loaded = true;
	if (!yaml_document_get_root_node(&y->doc))
		goto out_delete_parser;
	/* A second document in the same stream would silently be unused. */
	if (!yaml_parser_load(&parser, &extra)) {
		cat_error(y->err, y->file, (int)parser.problem_mark.line + 1,
			  (int)parser.problem_mark.column + 1, "invalid YAML: %s",
			  parser.problem ? parser.problem : "cannot parse");
		r = -EINVAL;
		goto out_delete_parser;
	}
	if (yaml_document_get_root_node(&extra)) {
		yaml_node_t *x = yaml_document_get_root_node(&extra);

		cat_error(y->err, y->file, (int)x->start_mark.line + 1,
			  (int)x->start_mark.column + 1,
			  "a second YAML document: the file must hold one");
		r = -EINVAL;
	}
	yaml_document_delete(&extra);
out_delete_parser:
	yaml_parser_delete(&parser);
	if (r < 0)
		cat_yaml_done(y); /* on failure the caller has nothing to free */
	return r;
}

int cat_read_file(const char *path, size_t max, const char *what, char **ret_buf,
		  size_t *ret_len, struct iosig_error *err)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0, cap;
	int fd, r;

	/* O_NONBLOCK: opening a FIFO would wait for a writer forever (and
	 * this runs inside every annotated program); regular files ignore it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		cat_error(err, path, 0, 0, "cannot read %s: %s", what, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		r = -EINVAL;
		cat_error(err, path, 0, 0, "cannot read %s: not a regular file", what);
		goto out_close_fd;
	}
	if ((uint64_t)st.st_size > max) {
		r = -EFBIG;
		cat_error(err, path, 0, 0, "%s is larger than %zu bytes", what, max);
		goto out_close_fd;
	}
	/* Read to the end rather than st_size bytes: files in /proc say 0, and
	 * a file may grow meanwhile. */
	cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
	for (;;) {
		ssize_t n;

		if (!buf || len == cap) {
			char *nbuf;

			if (buf)
				cap = cap > max / 2 ? max + 1 : cap * 2;
			nbuf = realloc(buf, cap + 1);
			if (!nbuf) {
				r = -ENOMEM;
				cat_error(err, path, 0, 0, "out of memory");
				goto out_free_buf;
			}
			buf = nbuf;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			cat_error(err, path, 0, 0, "cannot read %s: %s", what, strerror(-r));
			goto out_free_buf;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max) {
			r = -EFBIG;
			cat_error(err, path, 0, 0, "%s is larger than %zu bytes", what, max);
			goto out_free_buf;
		}
	}
	buf[len] = '\0';
	*ret_buf = buf;
	*ret_len = len;
	buf = NULL;
	r = 0;
out_free_buf:
	free(buf);
out_close_fd:
	close(fd);
	return r;
}

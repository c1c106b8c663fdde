/* Reads five-field schedules, one per line, and prints how cronie's load_entry (its own
 * source, compiled here) reads each: "error", or the minute/hour/dom/month/dow bits and
 * the DOM_STAR/DOW_STAR flags. Usage: harness < schedules */
#define MAIN_PROGRAM 1
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <pwd.h>
#include "src/globals.h"
#include "src/funcs.h"
#include "src/macros.h"
#include "src/bitstring.h"

int get_char(FILE * file) { return getc(file); }
void unget_char(int ch, FILE * file) { ungetc(ch, file); }
int get_string(char *string, int size, FILE * file, const char *terms) {
	int ch;
	while (EOF != (ch = get_char(file)) && !strchr(terms, ch)) {
		if (size > 1) { *string++ = (char) ch; size--; }
	}
	if (size > 0) *string = '\0';
	return (ch);
}
int skip_comments(FILE * file) {
	int ch;
	while (EOF != (ch = get_char(file))) {
		while (ch == ' ' || ch == '\t') ch = get_char(file);
		if (ch == EOF) break;
		if (ch != '\n' && ch != '#') break;
		while (ch != '\n' && ch != EOF) ch = get_char(file);
	}
	if (ch != EOF) unget_char(ch, file);
	return TRUE;
}
int glue_strings(char *buffer, size_t buffer_size, const char *a, const char *b, char separator) {
	int n = snprintf(buffer, buffer_size, "%s%c%s", a, separator, b);
	return n >= 0 && (size_t) n < buffer_size;
}
void log_it(const char *username, PID_T xpid, const char *event, const char *detail, int err) {}
static int failed;
static void on_error(const char *msg) { failed = 1; }
static void bits(bitstr_t *b, int n) { for (int i = 0; i < n; i++) putchar(bit_test(b, i) ? '1' : '0'); putchar(' '); }

#include "src/entry.c"

int main(void) {
	char line[4096];
	struct passwd pw = { "root", "", 0, 0, "", "/root", "/bin/sh" };
	srandom(1);
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = '\0';
		char buf[4200];
		snprintf(buf, sizeof buf, "%s true\n", line);
		FILE *f = fmemopen(buf, strlen(buf), "r");
		char **envp = env_init();
		char envstr[MAX_ENVSTR];
		entry *e = NULL;
		failed = 0;
		skip_comments(f);
		int status = load_env(envstr, f);
		if (status == FALSE) e = load_entry(f, on_error, &pw, envp);
		if (e == NULL) { puts(status == TRUE ? "env" : "error"); }
		else {
			bits(e->minute, 60); bits(e->hour, 24); bits(e->dom, 31); bits(e->month, 12); bits(e->dow, 8);
			printf("%d%d\n", (e->flags & DOM_STAR) ? 1 : 0, (e->flags & DOW_STAR) ? 1 : 0);
			free_entry(e);
		}
		env_free(envp);
		fclose(f);
		fflush(stdout);
	}
	return 0;
}
int strcmp_until(const char *left, const char *right, char until) {
	while (*left && *left != until && *left == *right) {
		left++;
		right++;
	}

	if ((*left == '\0' || *left == until) && (*right == '\0' ||
			*right == until)) {
		return (0);
	}
	return (*left - *right);
}

/* strdtb(s) - delete trailing blanks in string 's' and return new length
 */

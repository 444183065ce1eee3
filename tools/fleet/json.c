/* json.c -- the CLI's JSON tree, its text form, and its human forms (a
 * table of an array of objects, key/value lines of an object). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Table cells longer than this are cut (with "..."). */
#define CLI_CELL_MAX 48

static cli_json_t *jnew(cli_jtype_t type) {
  cli_json_t *j = calloc(1, sizeof(*j));

  if (j != NULL)
    j->type = type;
  return j;
}

cli_json_t *cli_jobj(void) {
  return jnew(CLI_JOBJ);
}

cli_json_t *cli_jarr(void) {
  return jnew(CLI_JARR);
}

cli_json_t *cli_jnull(void) {
  return jnew(CLI_JNULL);
}

cli_json_t *cli_jbytes(const void *p, size_t len) {
  cli_json_t *j = jnew(CLI_JSTR);

  if (j == NULL)
    return NULL;
  j->str = malloc(len + 1);
  if (j->str == NULL) {
    free(j);
    return NULL;
  }
  if (len > 0)
    memcpy(j->str, p, len);
  j->str[len] = '\0';
  j->len = len;
  return j;
}

cli_json_t *cli_jstr(const char *s) {
  return cli_jbytes(s != NULL ? s : "", s != NULL ? strlen(s) : 0);
}

cli_json_t *cli_jint(int64_t v) {
  cli_json_t *j = jnew(CLI_JINT);

  if (j != NULL)
    j->num = v;
  return j;
}

cli_json_t *cli_jbool(int v) {
  cli_json_t *j = jnew(CLI_JBOOL);

  if (j != NULL)
    j->num = v != 0;
  return j;
}

cli_json_t *cli_jadd(cli_json_t *parent, const char *key, cli_json_t *child) {
  if (parent == NULL || child == NULL) {
    cli_jfree(child);
    if (parent != NULL)
      parent->num = -1; /* incomplete: out of memory */
    return NULL;
  }
  if (key != NULL && (child->key = strdup(key)) == NULL) {
    cli_jfree(child);
    parent->num = -1;
    return NULL;
  }
  if (parent->last != NULL)
    parent->last->next = child;
  else
    parent->first = child;
  parent->last = child;
  parent->n++;
  return child;
}

cli_json_t *cli_jget(const cli_json_t *obj, const char *key) {
  const cli_json_t *c;

  if (obj == NULL || obj->type != CLI_JOBJ)
    return NULL;
  for (c = obj->first; c != NULL; c = c->next)
    if (strcmp(c->key, key) == 0)
      return (cli_json_t *)c;
  return NULL;
}

cli_json_t *cli_jcopy(const cli_json_t *j) {
  cli_json_t *c =
      j->type == CLI_JSTR ? cli_jbytes(j->str, j->len) : jnew(j->type);
  const cli_json_t *k;

  if (c == NULL)
    return NULL;
  if (j->type != CLI_JSTR)
    c->num = j->num;
  for (k = j->first; k != NULL; k = k->next)
    if (cli_jadd(c, k->key, cli_jcopy(k)) == NULL) {
      cli_jfree(c);
      return NULL;
    }
  return c;
}

void cli_jfree(cli_json_t *j) {
  cli_json_t *c, *next;

  if (j == NULL)
    return;
  for (c = j->first; c != NULL; c = next) {
    next = c->next;
    cli_jfree(c);
  }
  free(j->key);
  free(j->str);
  free(j);
}

/* ------------------------------------------------------------------------ */
/* Buffers and text                                                         */

void cli_buf_add(cli_buf_t *b, const void *p, size_t len) {
  char *np;
  size_t cap;

  if (b->oom || (len == 0 && b->p != NULL))
    return;
  if (b->len + len + 1 > b->cap) {
    cap = b->cap ? b->cap : 256;
    while (cap < b->len + len + 1)
      cap *= 2;
    np = realloc(b->p, cap);
    if (np == NULL) {
      b->oom = 1;
      return;
    }
    b->p = np;
    b->cap = cap;
  }
  if (len > 0)
    memcpy(b->p + b->len, p, len);
  b->len += len;
  b->p[b->len] = '\0';
}

void cli_buf_str(cli_buf_t *b, const char *s) {
  cli_buf_add(b, s, strlen(s));
}

void cli_buf_printf(cli_buf_t *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
  va_end(ap);
  if (n > 0)
    cli_buf_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

void cli_buf_esc(cli_buf_t *b, const char *s, size_t len) {
  size_t n = fleet_escape_text(s, len, NULL, 0);
  char *tmp = malloc(n + 1);

  if (tmp == NULL) {
    b->oom = 1;
    return;
  }
  fleet_escape_text(s, len, tmp, n + 1);
  cli_buf_add(b, tmp, n);
  free(tmp);
}

void cli_buf_free(cli_buf_t *b) {
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

/* The length of the valid UTF-8 sequence at `s` (of `len` bytes), or 0 (no
 * overlong forms, no surrogates, nothing past U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t len) {
  size_t n, i;
  uint32_t cp;

  if (s[0] < 0x80)
    return 1;
  if (s[0] >= 0xc2 && s[0] <= 0xdf)
    n = 2, cp = s[0] & 0x1f;
  else if (s[0] >= 0xe0 && s[0] <= 0xef)
    n = 3, cp = s[0] & 0x0f;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4)
    n = 4, cp = s[0] & 0x07;
  else
    return 0;
  if (len < n)
    return 0;
  for (i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
      (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return n;
}

void cli_json_quote(cli_buf_t *b, const char *s, size_t len) {
  static const char hex[] = "0123456789abcdef";
  size_t i;
  unsigned char c;
  char esc[7];

  cli_buf_add(b, "\"", 1);
  for (i = 0; i < len; i++) {
    c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      esc[0] = '\\';
      esc[1] = (char)c;
      cli_buf_add(b, esc, 2);
    } else if (c < 0x20 || c == 0x7f) {
      memcpy(esc, "\\u00", 4);
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 15];
      cli_buf_add(b, esc, 6);
    } else if (c == '<') {
      /* Safe inside an HTML <script> (the dashboard inlines JSON). */
      cli_buf_add(b, "\\u003c", 6);
    } else if (c >= 0x80) {
      size_t n = utf8_len((const unsigned char *)s + i, len - i);

      if (n == 2 && c == 0xc2 && (unsigned char)s[i + 1] < 0xa0) {
        /* A C1 control (U+0080-U+009F): escaped, as terminals may act
         * on it. */
        memcpy(esc, "\\u00", 4);
        esc[4] = hex[(unsigned char)s[i + 1] >> 4];
        esc[5] = hex[s[i + 1] & 15];
        cli_buf_add(b, esc, 6);
        i++;
      } else if (n > 0) {
        cli_buf_add(b, &s[i], n);
        i += n - 1;
      } else {
        /* Not UTF-8: the byte as the code point of the same value, so that
         * the output is valid JSON whatever the data. */
        memcpy(esc, "\\u00", 4);
        esc[4] = hex[c >> 4];
        esc[5] = hex[c & 15];
        cli_buf_add(b, esc, 6);
      }
    } else {
      cli_buf_add(b, &s[i], 1);
    }
  }
  cli_buf_add(b, "\"", 1);
}

void cli_json_write(cli_buf_t *b, const cli_json_t *j) {
  const cli_json_t *c;

  switch (j->type) {
    case CLI_JNULL:
      cli_buf_str(b, "null");
      break;
    case CLI_JBOOL:
      cli_buf_str(b, j->num ? "true" : "false");
      break;
    case CLI_JINT:
      cli_buf_printf(b, "%lld", (long long)j->num);
      break;
    case CLI_JSTR:
      cli_json_quote(b, j->str, j->len);
      break;
    case CLI_JARR:
    case CLI_JOBJ:
      cli_buf_add(b, j->type == CLI_JARR ? "[" : "{", 1);
      for (c = j->first; c != NULL; c = c->next) {
        if (c != j->first)
          cli_buf_add(b, ",", 1);
        if (j->type == CLI_JOBJ) {
          cli_json_quote(b, c->key, strlen(c->key));
          cli_buf_add(b, ":", 1);
        }
        cli_json_write(b, c);
      }
      cli_buf_add(b, j->type == CLI_JARR ? "]" : "}", 1);
      break;
  }
}

/* A value as a table cell or a key/value line: strings made inert by
 * cli_buf_esc(), others as JSON. */
static void cell_text(cli_buf_t *b, const cli_json_t *j) {
  if (j == NULL) {
    cli_buf_str(b, "-");
    return;
  }
  if (j->type != CLI_JSTR) {
    cli_json_write(b, j);
    return;
  }
  cli_buf_esc(b, j->str, j->len);
}

/* The colour of a cell of column `col` (cli_colour_of()): a state in a
 * column "state", or a count other than 0 in a column named after a state
 * ("dead", "dead_now"); NULL for none. */
static const char *cell_colour(const char *col, const char *text) {
  char state[32];
  size_t n = strcspn(col, "_-");

  if (strcmp(col, "state") == 0)
    return cli_colour_of(text);
  if (strcmp(text, "0") == 0 || text[0] < '0' || text[0] > '9' ||
      n >= sizeof(state))
    return NULL;
  if (strcmp(col, "waiting_children") == 0)
    return cli_colour_of(col);
  memcpy(state, col, n);
  state[n] = '\0';
  return strcmp(col + n, "") == 0 || strcmp(col + n, "_now") == 0
             ? cli_colour_of(state)
             : NULL;
}

void cli_table(FILE *out, const cli_json_t *arr, const char *const *cols) {
  size_t ncol = 0, nrow, r, c, k, *width;
  cli_buf_t *cells;
  const cli_json_t *row;

  while (cols[ncol] != NULL)
    ncol++;
  nrow = arr != NULL ? arr->n : 0;
  cells = calloc((nrow + 1) * ncol, sizeof(*cells));
  width = calloc(ncol, sizeof(*width));
  if (cells == NULL || width == NULL) {
    free(cells);
    free(width);
    return;
  }
  for (c = 0; c < ncol; c++)
    for (k = 0; cols[c][k] != '\0'; k++) {
      char up =
          cols[c][k] >= 'a' && cols[c][k] <= 'z' ? cols[c][k] - 32 : cols[c][k];
      cli_buf_add(&cells[c], &up, 1);
    }
  for (r = 1, row = arr != NULL ? arr->first : NULL; row != NULL;
       row = row->next, r++)
    for (c = 0; c < ncol; c++) {
      cli_buf_t *cell = &cells[r * ncol + c];

      cell_text(cell, cli_jget(row, cols[c]));
      if (cell->len > CLI_CELL_MAX && !cell->oom) {
        cell->len = CLI_CELL_MAX - 3;
        cli_buf_str(cell, "...");
      }
    }
  for (r = 0; r <= nrow; r++)
    for (c = 0; c < ncol; c++)
      if (cells[r * ncol + c].len > width[c])
        width[c] = cells[r * ncol + c].len;
  for (r = 0; r <= nrow; r++) {
    for (c = 0; c < ncol; c++) {
      cli_buf_t *cell = &cells[r * ncol + c];
      const char *text = cell->p != NULL ? cell->p : "";
      const char *sgr = r == 0 ? NULL : cell_colour(cols[c], text);

      if (r == 0)
        fputs(cli_bold(), out);
      else if (sgr != NULL)
        fputs(sgr, out);
      if (c + 1 < ncol)
        fprintf(out, "%-*s", (int)width[c], text);
      else
        fputs(text, out);
      if (r == 0 || sgr != NULL)
        fputs(cli_reset(), out);
      if (c + 1 < ncol)
        fputs("  ", out);
    }
    fputc('\n', out);
  }
  for (k = 0; k < (nrow + 1) * ncol; k++)
    cli_buf_free(&cells[k]);
  free(cells);
  free(width);
}

/* Whether the member `c` of `obj` is a time in ms ("created_ms") that
 * cli_jadd_time() gave a twin in words ("created"): printed as the
 * latter alone. */
static int kv_twin(const cli_json_t *obj, const cli_json_t *c) {
  char key[64];
  size_t n = strlen(c->key);

  if (c->type != CLI_JINT || n <= 3 || n - 3 >= sizeof(key) ||
      strcmp(c->key + n - 3, "_ms") != 0)
    return 0;
  memcpy(key, c->key, n - 3);
  key[n - 3] = '\0';
  return cli_jget(obj, key) != NULL;
}

void cli_kv(FILE *out, const cli_json_t *obj) {
  cli_kv_but(out, obj, NULL);
}

void cli_kv_but(FILE *out, const cli_json_t *obj, const char *skip) {
  const cli_json_t *c;
  size_t w = 0;

  for (c = obj->first; c != NULL; c = c->next)
    if (strlen(c->key) > w && !kv_twin(obj, c) &&
        (skip == NULL || strcmp(c->key, skip) != 0))
      w = strlen(c->key);
  for (c = obj->first; c != NULL; c = c->next) {
    cli_buf_t b = {0};

    if (kv_twin(obj, c) || (skip != NULL && strcmp(c->key, skip) == 0))
      continue;

    const char *sgr;

    cell_text(&b, c);
    sgr = cell_colour(c->key, b.p != NULL ? b.p : "");
    fprintf(out, "%s:%*s %s%s%s\n", c->key, (int)(w - strlen(c->key)), "",
            sgr != NULL ? sgr : "", b.p != NULL ? b.p : "",
            sgr != NULL ? cli_reset() : "");
    cli_buf_free(&b);
  }
}

// SPDX-License-Identifier: MIT
/*
 * trace_read.c -- loading and checking a trace (trace_read.h).
 *
 * Checks, in the order a reader meets them: the file opens and is not
 * empty; the header is whole, has the magic, a version this reader knows
 * (a newer one is refused by name: its records may mean something else),
 * this host's byte order and the record size of that version; the records
 * are whole (a file cut in the middle of a record is "truncated", with the
 * offset of the partial record); each record's fields are in range; no
 * sequence number repeats; and, in call order, the ids follow the life of a
 * block (allocated once, freed or resized only while live).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_read.h"

static const char *const op_names[TOP_COUNT] = {
    "?",        "malloc", "calloc",  "realloc", "free",  "aligned_alloc", "posix_memalign",
    "memalign", "valloc", "pvalloc", "new",     "new[]", "delete",        "delete[]"};

const char *trace_op_name(unsigned op) { return op > 0 && op < TOP_COUNT ? op_names[op] : "?"; }

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        snprintf(err, err_n, __VA_ARGS__);                                                         \
        return -1;                                                                                 \
    } while (0)

/* Reads the whole file into *buf. */
static int read_file(const char *path, unsigned char **buf, size_t *len, char *err, size_t err_n)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        FAIL("cannot open %s: %s", path, strerror(errno));
    size_t cap = 1u << 16, n = 0;
    unsigned char *b = malloc(cap);
    while (b != NULL) {
        n += fread(b + n, 1, cap - n, f);
        if (n < cap)
            break;
        unsigned char *nb = realloc(b, cap * 2);
        if (nb == NULL) {
            free(b);
            b = NULL;
            break;
        }
        b = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (b == NULL)
        FAIL("%s: out of memory reading the trace", path);
    if (bad) {
        free(b);
        FAIL("cannot read %s", path);
    }
    *buf = b;
    *len = n;
    return 0;
}

static int check_header(const unsigned char *b, size_t len, trace_header *h, char *err,
                        size_t err_n)
{
    if (len == 0)
        FAIL("offset 0: empty file (no trace header)");
    if (len < 8 || memcmp(b, TRACE_MAGIC, 8) != 0)
        FAIL("offset 0: not an rtmem trace (no \"%s\" magic)", TRACE_MAGIC);
    if (len < TRACE_HEADER_BYTES)
        FAIL("offset %zu: truncated header (%zu of %u bytes)", len, len, TRACE_HEADER_BYTES);
    memcpy(h, b, sizeof *h);
    if (h->version == 0 || h->version > TRACE_VERSION)
        FAIL("offset %zu: trace format version %u; this rtmem reads version %u%s",
             offsetof(trace_header, version), h->version, TRACE_VERSION,
             h->version > TRACE_VERSION ? " (a newer rtmem wrote it)" : "");
    if (h->endian != TRACE_ENDIAN)
        FAIL("offset %zu: byte-order marker 0x%08x: written on a host of another byte order",
             offsetof(trace_header, endian), h->endian);
    if (h->header_bytes != TRACE_HEADER_BYTES || h->record_bytes != TRACE_RECORD_BYTES)
        FAIL("offset %zu: header/record size %u/%u, version %u has %u/%u",
             offsetof(trace_header, header_bytes), h->header_bytes, h->record_bytes, h->version,
             TRACE_HEADER_BYTES, TRACE_RECORD_BYTES);
    return 0;
}

/* Field ranges of one record, before any order is known. */
static int check_fields(const trace_record *r, uint64_t off, uint64_t id_limit, char *err,
                        size_t err_n)
{
    if (r->op == 0 || r->op >= TOP_COUNT)
        FAIL("offset %llu: corrupt record: operation code %u", (unsigned long long)off, r->op);
    if (r->reserved != 0 || r->align_log2 > 40)
        FAIL("offset %llu: corrupt record: reserved field 0x%x, alignment log2 %u",
             (unsigned long long)off, r->reserved, r->align_log2);
    if (r->id > id_limit || r->old_id > id_limit)
        FAIL("offset %llu: corrupt record: block id %u beyond what %llu records can hold",
             (unsigned long long)off, r->id > id_limit ? r->id : r->old_id,
             (unsigned long long)id_limit);
    trace_class c = trace_op_class(r->op);
    if ((c == TC_ALLOC && r->old_id != 0) || (c == TC_FREE && (r->id != 0 || r->old_id == 0)))
        FAIL("offset %llu: corrupt record: %s with id %u and old id %u", (unsigned long long)off,
             trace_op_name(r->op), r->id, r->old_id);
    return 0;
}

typedef struct keyed {
    uint64_t seq;
    size_t index;
} keyed;

static int by_seq(const void *a, const void *b)
{
    uint64_t x = ((const keyed *)a)->seq, y = ((const keyed *)b)->seq;
    return x < y ? -1 : x > y;
}

enum { ID_NEVER = 0, ID_LIVE = 1, ID_FREED = 2 };

/* The life of each block, in call order. */
static int check_ids(const trace *t, char *err, size_t err_n)
{
    unsigned char *state = calloc((size_t)t->max_id + 1, 1);
    if (state == NULL)
        FAIL("out of memory checking %u block ids", t->max_id);
    for (size_t i = 0; i < t->n; i++) {
        const trace_op_rec *o = &t->ops[i];
        if (o->old_id != 0 && state[o->old_id] != ID_LIVE) {
            unsigned s = state[o->old_id];
            free(state);
            FAIL("offset %llu: %s of block id %u that was %s", (unsigned long long)o->offset,
                 trace_op_name(o->op), o->old_id,
                 s == ID_NEVER ? "never allocated" : "already freed");
        }
        int failed_resize = o->op == TOP_REALLOC && o->id == 0 && o->size != 0;
        if (o->old_id != 0 && !failed_resize)
            state[o->old_id] = ID_FREED;
        if (o->id != 0) {
            if (state[o->id] != ID_NEVER) {
                free(state);
                FAIL("offset %llu: block id %u allocated a second time",
                     (unsigned long long)o->offset, o->id);
            }
            state[o->id] = ID_LIVE;
        }
    }
    free(state);
    return 0;
}

/* Records from the file into t->ops in call order. */
static int take_records(const unsigned char *b, size_t nrec, trace *t, char *err, size_t err_n)
{
    keyed *k = malloc((nrec ? nrec : 1) * sizeof *k);
    trace_record *raw = malloc((nrec ? nrec : 1) * sizeof *raw);
    t->ops = malloc((nrec ? nrec : 1) * sizeof *t->ops);
    if (k == NULL || raw == NULL || t->ops == NULL) {
        free(k);
        free(raw);
        FAIL("out of memory for %zu records", nrec);
    }
    uint64_t id_limit = 2u * (uint64_t)nrec + 1024u;
    for (size_t i = 0; i < nrec; i++) {
        uint64_t off = TRACE_HEADER_BYTES + (uint64_t)i * TRACE_RECORD_BYTES;
        memcpy(&raw[i], b + off, sizeof raw[i]);
        if (check_fields(&raw[i], off, id_limit, err, err_n) != 0) {
            free(k);
            free(raw);
            return -1;
        }
        k[i].seq = raw[i].seq;
        k[i].index = i;
    }
    qsort(k, nrec, sizeof *k, by_seq);
    for (size_t i = 0; i < nrec; i++) {
        const trace_record *r = &raw[k[i].index];
        uint64_t off = TRACE_HEADER_BYTES + (uint64_t)k[i].index * TRACE_RECORD_BYTES;
        if (i > 0 && k[i].seq == k[i - 1].seq) {
            unsigned long long seq = (unsigned long long)k[i].seq;
            free(k);
            free(raw);
            FAIL("offset %llu: corrupt record: sequence number %llu appears twice",
                 (unsigned long long)off, seq);
        }
        trace_op_rec *o = &t->ops[i];
        o->op = r->op;
        o->align_log2 = r->align_log2;
        o->thread = r->thread;
        o->id = r->id;
        o->old_id = r->old_id;
        o->size = r->size;
        o->t_ns = r->t_ns;
        o->offset = off;
        if (r->id > t->max_id)
            t->max_id = r->id;
        if ((unsigned)r->thread + 1u > t->nthreads)
            t->nthreads = (unsigned)r->thread + 1u;
    }
    t->n = nrec;
    free(k);
    free(raw);
    return 0;
}

int trace_load(const char *path, trace *t, char *err, size_t err_n)
{
    memset(t, 0, sizeof *t);
    unsigned char *b;
    size_t len;
    if (read_file(path, &b, &len, err, err_n) != 0)
        return -1;
    int rc = check_header(b, len, &t->hdr, err, err_n);
    size_t body = len >= TRACE_HEADER_BYTES ? len - TRACE_HEADER_BYTES : 0;
    if (rc == 0 && body % TRACE_RECORD_BYTES != 0) {
        size_t at = len - body % TRACE_RECORD_BYTES;
        snprintf(err, err_n, "offset %zu: truncated record (%zu of %u bytes)", at,
                 body % TRACE_RECORD_BYTES, TRACE_RECORD_BYTES);
        rc = -1;
    }
    if (rc == 0)
        rc = take_records(b, body / TRACE_RECORD_BYTES, t, err, err_n);
    free(b);
    if (rc == 0)
        rc = check_ids(t, err, err_n);
    if (rc != 0)
        trace_free(t);
    return rc;
}

void trace_free(trace *t)
{
    free(t->ops);
    t->ops = NULL;
    t->n = 0;
}

void trace_truncate(trace *t, size_t n)
{
    if (n < t->n)
        t->n = n;
}

/* Native flattening kernel: the walk of flatten.py's Python walker, emitting column buffers.
 *
 * flatten.py is the reference: this file mirrors its walk_dict / walk_list branch for branch
 * (same type tests, same order, same messages) and calls back into flatten.py wherever the
 * Python walker calls a helper (_segments, _container_text, _array_text, _check_encodable), so
 * quoting rules, canonical JSON and error texts have one definition.
 *
 * Output, per leaf row: doc, item, node, kind code, text (Arrow large-string offsets + data +
 * validity), is_null, empty_array; per item row: item, doc, parent, depth, node, index.
 * suffix / attribute / key / member are not copied per row: a row names a path node, and the
 * few distinct nodes (one per distinct path shape, list indices are never part of a suffix) are
 * returned once as Python lists for a gather on the Polars side.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Kinds, in the order of values.KINDS. */
enum { K_NULL, K_BOOL, K_INT, K_FLOAT, K_STRING, K_ARRAY, K_OBJECT };

/* A C frame chain this deep would approach the thread's stack size; Python's own recursion
 * limit (checked by Py_EnterRecursiveCall at every level) normally stops the walk long before. */
#define MAX_C_DEPTH 20000

/* ---------------------------------------------------------------------------------------- */
/* Memory handed to Python without a copy: a read-only buffer-protocol object owning a malloc
 * block (numpy.frombuffer and pyarrow.py_buffer keep it alive while they use it). */

typedef struct {
    PyObject_HEAD
    char *data;
    Py_ssize_t size;
} BufferObject;

static char empty_data[1];

static int
buffer_getbuffer(PyObject *op, Py_buffer *view, int flags)
{
    BufferObject *self = (BufferObject *)op;
    return PyBuffer_FillInfo(view, op, self->data ? self->data : empty_data, self->size, 1, flags);
}

static void
buffer_dealloc(PyObject *op)
{
    free(((BufferObject *)op)->data);
    Py_TYPE(op)->tp_free(op);
}

static PyBufferProcs buffer_as_buffer = {buffer_getbuffer, NULL};

static PyTypeObject BufferType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "jsoneval_polars._flatten.Buffer",
    .tp_basicsize = sizeof(BufferObject),
    .tp_dealloc = buffer_dealloc,
    .tp_as_buffer = &buffer_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Read-only memory produced by the flattening kernel.",
};

/* Takes ownership of *data (malloc'd, `size` bytes used) and clears the caller's pointer. */
static PyObject *
buffer_take(void **data, size_t size)
{
    BufferObject *b = PyObject_New(BufferObject, &BufferType);
    if (b == NULL)
        return NULL;
    if (*data != NULL && size > 0) {
        /* shrink the doubling slack: the frames built on this memory may live long */
        void *p = realloc(*data, size);
        b->data = p ? p : *data;
    }
    else {
        free(*data);
        b->data = NULL;
    }
    b->size = (Py_ssize_t)size;
    *data = NULL;
    return (PyObject *)b;
}

/* Sizes of the previous call's columns: batches are usually alike, and starting at the right
 * size saves the copies of growing (the GIL serialises calls). */
static size_t hint_rows, hint_text, hint_items;

/* Capacity after cap when one more element is needed; the first one is `first`. */
static int
next_cap(size_t cap, size_t first, size_t *out)
{
    if (cap > SIZE_MAX / 64 || first > SIZE_MAX / 64) {
        PyErr_NoMemory();
        return -1;
    }
    *out = cap ? cap * 2 : first > 1024 ? first : 1024;
    return 0;
}

/* Resizes *p to n elements of elem bytes; *p is unchanged on failure. */
static int
resize(void **p, size_t n, size_t elem)
{
    void *q = realloc(*p, n * elem);
    if (q == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *p = q;
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Path nodes. A node is a walk_dict context (suffix, attribute, root, item_root) and, for the
 * rows written at it, the (suffix, attribute, key, member) of a row. */

typedef struct {
    PyObject *suffix, *attr; /* str, owned */
    PyObject *key;           /* str, owned; NULL for the root */
    Py_hash_t hash;          /* hash of key */
    Py_ssize_t parent;       /* context the key was looked up in (-1: root or record context) */
    Py_ssize_t records;      /* record context of a list of records at this node, or -1 */
    unsigned char root, item_root, member;
} Node;

typedef struct {
    /* leaf rows */
    size_t n, cap, null_count;
    uint32_t *doc, *node;
    int64_t *item, *off; /* off holds n + 1 entries */
    uint8_t *kind, *valid, *is_null, *empty_array;
    char *text;
    size_t text_len, text_cap;
    /* item rows */
    size_t in, icap;
    int64_t *i_item, *i_parent;
    uint32_t *i_doc, *i_node;
    int32_t *i_depth, *i_index;
    /* nodes, and a hash table (parent, key) -> node */
    Node *nodes;
    size_t n_nodes, cap_nodes;
    Py_ssize_t *table;
    size_t table_mask;
    /* walk state */
    PyObject *members; /* list of (item, member, kind, text, False) */
    int64_t next_item;
    uint32_t doc_pos;
    int empty_null;
    int c_depth;
    /* flatten.py helpers (borrowed) */
    PyObject *segments, *seg_cache, *container_text, *array_text, *check_encodable, *unrepr;
} State;

/* interned constants */
static PyObject *s_empty, *s_space, *s_brackets, *s_lower, *s_object, *s_array;

/* ASCII: the whitespace of str.split(), and each byte as the canonical text writes it (lower
 * case, whitespace as a space) */
static unsigned char is_ws[256], canon_of[256];

static void
state_free(State *st)
{
    free(st->doc);
    free(st->node);
    free(st->item);
    free(st->off);
    free(st->kind);
    free(st->valid);
    free(st->is_null);
    free(st->empty_array);
    free(st->text);
    free(st->i_item);
    free(st->i_parent);
    free(st->i_doc);
    free(st->i_node);
    free(st->i_depth);
    free(st->i_index);
    for (size_t i = 0; i < st->n_nodes; i++) {
        Py_XDECREF(st->nodes[i].suffix);
        Py_XDECREF(st->nodes[i].attr);
        Py_XDECREF(st->nodes[i].key);
    }
    free(st->nodes);
    free(st->table);
    Py_XDECREF(st->members);
}

/* Room for one more leaf row in every leaf column (off holds one entry more). */
static int
leaves_grow(State *st)
{
    size_t cap;
    if (next_cap(st->cap, hint_rows, &cap) < 0 ||
        resize((void **)&st->doc, cap, sizeof(*st->doc)) < 0 ||
        resize((void **)&st->node, cap, sizeof(*st->node)) < 0 ||
        resize((void **)&st->item, cap, sizeof(*st->item)) < 0 ||
        resize((void **)&st->kind, cap, 1) < 0 ||
        resize((void **)&st->valid, cap, 1) < 0 ||
        resize((void **)&st->is_null, cap, 1) < 0 ||
        resize((void **)&st->empty_array, cap, 1) < 0 ||
        resize((void **)&st->off, cap + 1, sizeof(*st->off)) < 0)
        return -1;
    st->cap = cap;
    return 0;
}

static int
items_grow(State *st)
{
    size_t cap;
    if (next_cap(st->icap, hint_items, &cap) < 0 ||
        resize((void **)&st->i_item, cap, sizeof(*st->i_item)) < 0 ||
        resize((void **)&st->i_parent, cap, sizeof(*st->i_parent)) < 0 ||
        resize((void **)&st->i_doc, cap, sizeof(*st->i_doc)) < 0 ||
        resize((void **)&st->i_node, cap, sizeof(*st->i_node)) < 0 ||
        resize((void **)&st->i_depth, cap, sizeof(*st->i_depth)) < 0 ||
        resize((void **)&st->i_index, cap, sizeof(*st->i_index)) < 0)
        return -1;
    st->icap = cap;
    return 0;
}

static inline int
text_reserve(State *st, size_t n)
{
    if (n <= st->text_cap - st->text_len)
        return 0;
    size_t cap = st->text_cap;
    while (n > cap - st->text_len)
        if (next_cap(cap, hint_text, &cap) < 0)
            return -1;
    if (resize((void **)&st->text, cap, 1) < 0)
        return -1;
    st->text_cap = cap;
    return 0;
}

/* A leaf row whose text (tlen bytes, or null when tlen < 0) is already written at the end of
 * the text buffer. */
static int
leaf_row(State *st, int64_t item, Py_ssize_t node, int kind, Py_ssize_t tlen)
{
    if (st->n == st->cap && leaves_grow(st) < 0)
        return -1;
    size_t r = st->n;
    const char *t = tlen == 2 ? st->text + st->text_len : NULL;
    st->doc[r] = st->doc_pos;
    st->item[r] = item;
    st->node[r] = (uint32_t)node;
    st->kind[r] = (uint8_t)kind;
    st->valid[r] = tlen >= 0;
    /* is_null and empty_array as flatten.py's expressions define them */
    int two = t && ((t[0] == '[' && t[1] == ']') || (t[0] == '{' && t[1] == '}'));
    st->is_null[r] = tlen < 0 || (kind == K_STRING && tlen == 0) ||
                     (st->empty_null && (kind == K_ARRAY || kind == K_OBJECT) && two);
    st->empty_array[r] = kind == K_ARRAY && two && t[0] == '[';
    if (tlen > 0)
        st->text_len += (size_t)tlen;
    st->off[r + 1] = (int64_t)st->text_len;
    st->n = r + 1;
    return 0;
}

static int
leaf_literal(State *st, int64_t item, Py_ssize_t node, int kind, const char *s, size_t n)
{
    if (text_reserve(st, n) < 0)
        return -1;
    memcpy(st->text + st->text_len, s, n);
    return leaf_row(st, item, node, kind, (Py_ssize_t)n);
}

/* The UTF-8 of a str as the text of a leaf row. */
static int
leaf_unicode(State *st, int64_t item, Py_ssize_t node, int kind, PyObject *s)
{
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    if (u == NULL)
        return -1;
    return leaf_literal(st, item, node, kind, u, (size_t)n);
}

static int
item_row(State *st, int64_t iid, int64_t parent, int32_t depth, Py_ssize_t node, int32_t index)
{
    if (st->in == st->icap && items_grow(st) < 0)
        return -1;
    size_t r = st->in++;
    st->i_item[r] = iid;
    st->i_doc[r] = st->doc_pos;
    st->i_parent[r] = parent;
    st->i_depth[r] = depth;
    st->i_node[r] = (uint32_t)node;
    st->i_index[r] = index;
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Nodes */

/* Steals suffix and attr (also on failure); borrows key. */
static Py_ssize_t
node_new(State *st, PyObject *suffix, PyObject *attr, PyObject *key, Py_hash_t hash,
         Py_ssize_t parent, int root, int item_root, int member)
{
    size_t cap = st->cap_nodes;
    if (suffix == NULL || attr == NULL ||
        (st->n_nodes == cap &&
         (next_cap(cap, 0, &cap) < 0 || resize((void **)&st->nodes, cap, sizeof(Node)) < 0))) {
        Py_XDECREF(suffix);
        Py_XDECREF(attr);
        return -1;
    }
    st->cap_nodes = cap;
    if (st->n_nodes >= UINT32_MAX) {
        Py_DECREF(suffix);
        Py_DECREF(attr);
        PyErr_SetString(PyExc_OverflowError, "too many distinct paths in one batch");
        return -1;
    }
    Node *n = &st->nodes[st->n_nodes];
    n->suffix = suffix;
    n->attr = attr;
    Py_XINCREF(key);
    n->key = key;
    n->hash = hash;
    n->parent = parent;
    n->records = -1;
    n->root = (unsigned char)root;
    n->item_root = (unsigned char)item_root;
    n->member = (unsigned char)member;
    return (Py_ssize_t)st->n_nodes++;
}

static inline size_t
slot_of(Py_ssize_t parent, Py_hash_t hash)
{
    uint64_t h = (uint64_t)hash ^ ((uint64_t)parent * 0x9E3779B97F4A7C15ull);
    return (size_t)(h ^ (h >> 29));
}

static int
table_grow(State *st)
{
    size_t size = (st->table_mask + 1) * 2;
    Py_ssize_t *t = malloc(size * sizeof(Py_ssize_t));
    if (t == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < size; i++)
        t[i] = -1;
    for (size_t i = 0; i <= st->table_mask; i++) {
        Py_ssize_t id = st->table[i];
        if (id < 0)
            continue;
        size_t j = slot_of(st->nodes[id].parent, st->nodes[id].hash) & (size - 1);
        while (t[j] >= 0)
            j = (j + 1) & (size - 1);
        t[j] = id;
    }
    free(st->table);
    st->table = t;
    st->table_mask = size - 1;
    return 0;
}

/* The node of object key k (an exact str) inside context ctx. */
static Py_ssize_t
child_node(State *st, Py_ssize_t ctx, PyObject *k)
{
    Py_hash_t hash = PyObject_Hash(k);
    if (hash == -1)
        return -1;
    size_t mask = st->table_mask, i = slot_of(ctx, hash) & mask;
    for (Py_ssize_t id; (id = st->table[i]) >= 0; i = (i + 1) & mask) {
        Node *n = &st->nodes[id];
        if (n->parent == ctx && n->hash == hash &&
            (n->key == k || PyUnicode_Compare(n->key, k) == 0))
            return id;
    }
    /* flatten.py: seg = cache.get(k) or _segments(k) */
    PyObject *seg = PyDict_GetItemWithError(st->seg_cache, k);
    if (seg != NULL)
        Py_INCREF(seg);
    else if (PyErr_Occurred() || (seg = PyObject_CallOneArg(st->segments, k)) == NULL)
        return -1;
    if (!PyTuple_CheckExact(seg) || PyTuple_GET_SIZE(seg) != 2 ||
        !PyUnicode_CheckExact(PyTuple_GET_ITEM(seg, 0)) ||
        !PyUnicode_CheckExact(PyTuple_GET_ITEM(seg, 1))) {
        Py_DECREF(seg);
        PyErr_SetString(PyExc_TypeError, "_segments must return a pair of str");
        return -1;
    }
    Node *c = &st->nodes[ctx];
    PyObject *s = PyUnicode_Concat(c->suffix, PyTuple_GET_ITEM(seg, c->root ? 0 : 1));
    int first = PyUnicode_GET_LENGTH(c->attr) == 0;
    PyObject *at = PyUnicode_Concat(c->attr, PyTuple_GET_ITEM(seg, first ? 0 : 1));
    int member = c->item_root;
    Py_DECREF(seg);
    Py_ssize_t id = node_new(st, s, at, k, hash, ctx, 0, 0, member);
    if (id < 0)
        return -1;
    if (st->n_nodes * 2 > mask + 1) {
        if (table_grow(st) < 0)
            return -1; /* the node stays unreachable: harmless */
        mask = st->table_mask;
        i = slot_of(ctx, hash) & mask;
        while (st->table[i] >= 0)
            i = (i + 1) & mask;
    }
    st->table[i] = id;
    return id;
}

/* The context of the records of a list of records at node n: suffix "", attribute at + "[]";
 * as a row node (an empty record) it carries the list's key and no member. */
static Py_ssize_t
records_node(State *st, Py_ssize_t n)
{
    if (st->nodes[n].records >= 0)
        return st->nodes[n].records;
    Py_INCREF(s_empty);
    Py_ssize_t id = node_new(st, s_empty, PyUnicode_Concat(st->nodes[n].attr, s_brackets),
                             st->nodes[n].key, -1, -1, 0, 1, 0);
    if (id >= 0)
        st->nodes[n].records = id;
    return id;
}

/* ---------------------------------------------------------------------------------------- */
/* Values */

static int
raise_unrepr(State *st, PyObject *msg)
{
    if (msg == NULL)
        return -1;
    PyErr_SetObject(st->unrepr, msg);
    Py_DECREF(msg);
    return -1;
}

/* text = " ".join(v.split()).lower(), checked for lone surrogates when not ASCII */
static int
leaf_string(State *st, int64_t item, Py_ssize_t node, PyObject *v)
{
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(v) < 0)
        return -1;
#endif
    if (PyUnicode_IS_ASCII(v)) {
        size_t n = (size_t)PyUnicode_GET_LENGTH(v);
        const unsigned char *src = PyUnicode_1BYTE_DATA(v);
        if (text_reserve(st, n) < 0)
            return -1;
        /* branch-free: every byte is written, the write position only advances past a
         * whitespace byte that follows a kept byte; a trailing space is cut at the end */
        char *dst = st->text + st->text_len;
        size_t w = 0;
        unsigned prev_ws = 1;
        for (size_t i = 0; i < n; i++) {
            unsigned ws = is_ws[src[i]];
            dst[w] = (char)canon_of[src[i]];
            w += !(ws & prev_ws);
            prev_ws = ws;
        }
        w -= w > 0 && prev_ws;
        return leaf_row(st, item, node, K_STRING, (Py_ssize_t)w);
    }
    PyObject *parts = PyUnicode_Split(v, NULL, -1);
    if (parts == NULL)
        return -1;
    PyObject *joined = PyUnicode_Join(s_space, parts);
    Py_DECREF(parts);
    if (joined == NULL)
        return -1;
    PyObject *text = PyObject_CallMethodNoArgs(joined, s_lower);
    Py_DECREF(joined);
    if (text == NULL)
        return -1;
    int rc = 0;
    if (!PyUnicode_IS_ASCII(text)) {
        PyObject *r = PyObject_CallFunctionObjArgs(st->check_encodable, text,
                                                   st->nodes[node].suffix, NULL);
        if (r == NULL)
            rc = -1;
        Py_XDECREF(r);
    }
    if (rc == 0)
        rc = leaf_unicode(st, item, node, K_STRING, text);
    Py_DECREF(text);
    return rc;
}

static size_t
format_i64(char *buf, long long x)
{
    char tmp[24];
    size_t n = 0;
    unsigned long long u = x < 0 ? 0ull - (unsigned long long)x : (unsigned long long)x;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t w = 0;
    if (x < 0)
        buf[w++] = '-';
    while (n)
        buf[w++] = tmp[--n];
    return w;
}

static int
leaf_int(State *st, int64_t item, Py_ssize_t node, PyObject *v)
{
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (!overflow) {
        char buf[24];
        return leaf_literal(st, item, node, K_INT, buf, format_i64(buf, x));
    }
    PyObject *s = PyObject_Str(v);
    if (s == NULL)
        return -1;
    int rc = leaf_unicode(st, item, node, K_INT, s);
    Py_DECREF(s);
    return rc;
}

static const double pow10_exact[] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* repr(x) for 1e-4 <= |x| < 2**53, x not integral, when its shortest round-trip decimal has a
 * few digits (prices, measurements): dtoa's bignum search costs ~10x more than this. The
 * decimal m / 10**k reads back as x exactly when the division of the two exact doubles does
 * (IEEE division rounds correctly). k rises from 1, and while a step of 10**-k is wider than
 * twice x's rounding interval at most one m (next to x * 10**k) can round-trip, so the first hit
 * is the unique shortest string, which is what repr prints (fixed notation in this range).
 * Returns the length written to buf (>= 40 bytes), or 0 to ask for the general algorithm. */
static size_t
short_repr(double x, char *buf)
{
    double a = fabs(x), ulp = nextafter(a, INFINITY) - a;
    if (!(a >= 1e-4 && a < 9007199254740992.0))
        return 0;
    for (int k = 1; k <= 22; k++) {
        double p = pow10_exact[k], scaled = a * p;
        if (scaled >= 9007199254740992.0 || ulp * p >= 0.5)
            return 0;
        double m = floor(scaled + 0.5);
        for (double c = m - 1; c <= m + 1; c++) {
            if (c <= 0 || c / p != a)
                continue;
            uint64_t digits = (uint64_t)c, div = (uint64_t)p;
            size_t w = 0;
            if (x < 0)
                buf[w++] = '-';
            w += format_i64(buf + w, (long long)(digits / div));
            buf[w++] = '.';
            uint64_t frac = digits % div;
            for (int i = k - 1; i >= 0; i--) {
                buf[w + (size_t)i] = (char)('0' + frac % 10);
                frac /= 10;
            }
            return w + (size_t)k;
        }
    }
    return 0;
}

/* values.canonical_float */
static int
leaf_float(State *st, int64_t item, Py_ssize_t node, double x)
{
    if (isnan(x))
        return leaf_row(st, item, node, K_FLOAT, -1);
    char buf[48];
    if (isfinite(x) && x == floor(x) && fabs(x) < 9007199254740992.0)
        return leaf_literal(st, item, node, K_FLOAT, buf, format_i64(buf, (long long)x));
    size_t n = short_repr(x, buf);
    if (n)
        return leaf_literal(st, item, node, K_FLOAT, buf, n);
    char *r = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL); /* = repr(x) */
    if (r == NULL)
        return -1;
    int rc = leaf_literal(st, item, node, K_FLOAT, r, strlen(r));
    PyMem_Free(r);
    return rc;
}

/* (item, member, kind, canonical JSON, False) for flatten.py's `extra` */
static int
add_member(State *st, int64_t item, PyObject *k, PyObject *kind, PyObject *v, Py_ssize_t node)
{
    PyObject *text = PyObject_CallFunctionObjArgs(st->container_text, v, st->nodes[node].suffix,
                                                  NULL);
    if (text == NULL)
        return -1;
    PyObject *iid = PyLong_FromLongLong(item);
    if (iid == NULL) {
        Py_DECREF(text);
        return -1;
    }
    PyObject *row = PyTuple_Pack(5, iid, k, kind, text, Py_False);
    Py_DECREF(iid);
    Py_DECREF(text);
    if (row == NULL)
        return -1;
    int rc = PyList_Append(st->members, row);
    Py_DECREF(row);
    return rc;
}

static int walk_dict(State *st, PyObject *d, Py_ssize_t ctx, int64_t item, int32_t depth);

static int
enter(State *st)
{
    if (Py_EnterRecursiveCall(" while flattening a document"))
        return -1;
    if (++st->c_depth > MAX_C_DEPTH) {
        st->c_depth--;
        Py_LeaveRecursiveCall();
        PyErr_SetString(PyExc_RecursionError, "document nested too deeply for the native walk");
        return -1;
    }
    return 0;
}

static void
leave(State *st)
{
    st->c_depth--;
    Py_LeaveRecursiveCall();
}

static inline Py_ssize_t
seq_size(PyObject *v)
{
    return PyList_CheckExact(v) ? PyList_GET_SIZE(v) : PyTuple_GET_SIZE(v);
}

static inline PyObject *
seq_item(PyObject *v, Py_ssize_t i)
{
    return PyList_CheckExact(v) ? PyList_GET_ITEM(v, i) : PyTuple_GET_ITEM(v, i);
}

/* flatten.py walk_list: v is an exact list or tuple at node n (key k), mem = item_root */
static int
walk_list(State *st, PyObject *v, Py_ssize_t n, PyObject *k, int mem, int64_t item, int32_t depth)
{
    if (enter(st) < 0)
        return -1;
    int rc = 0;
    Py_ssize_t size = seq_size(v), i;
    int records = size > 0;
    for (i = 0; i < size && records; i++)
        records = PyDict_CheckExact(seq_item(v, i));
    if (records) {
        Py_ssize_t inner = records_node(st, n);
        if (inner < 0 || (mem && add_member(st, item, k, s_array, v, n) < 0)) {
            rc = -1;
            goto done;
        }
        /* the size is re-read: a callback may have run Python code holding the list */
        for (i = 0; i < seq_size(v); i++) {
            PyObject *x = seq_item(v, i);
            if (!PyDict_CheckExact(x)) {
                PyErr_SetString(PyExc_RuntimeError, "list changed while it was flattened");
                rc = -1;
                goto done;
            }
            if (i > INT32_MAX || st->next_item == INT64_MAX) {
                PyErr_SetString(PyExc_OverflowError, "list index or item id out of range");
                rc = -1;
                goto done;
            }
            int64_t iid = st->next_item++;
            if (item_row(st, iid, item, depth + 1, n, (int32_t)i) < 0) {
                rc = -1;
                goto done;
            }
            Py_INCREF(x);
            if (PyDict_GET_SIZE(x))
                rc = walk_dict(st, x, inner, iid, depth + 1);
            else
                rc = leaf_literal(st, iid, inner, K_OBJECT, "{}", 2);
            Py_DECREF(x);
            if (rc < 0)
                goto done;
        }
    }
    else if (size == 0) {
        rc = leaf_literal(st, item, n, K_ARRAY, "[]", 2);
    }
    else {
        PyObject *text = PyObject_CallFunctionObjArgs(st->array_text, v, st->nodes[n].suffix,
                                                      NULL);
        if (text == NULL) {
            rc = -1;
            goto done;
        }
        rc = leaf_unicode(st, item, n, K_ARRAY, text);
        Py_DECREF(text);
    }
done:
    leave(st);
    return rc;
}

/* One member k: v of a dict walked in context ctx (flatten.py walk_dict's loop body). */
static int
walk_member(State *st, Py_ssize_t ctx, PyObject *k, PyObject *v, int64_t item, int32_t depth)
{
    if (!PyUnicode_CheckExact(k))
        return raise_unrepr(st, PyUnicode_FromFormat("object key %R at '%U' is not a string", k,
                                                     st->nodes[ctx].suffix));
    Py_ssize_t n = child_node(st, ctx, k);
    if (n < 0)
        return -1;
    int mem = st->nodes[ctx].item_root;
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyUnicode_Type)
        return leaf_string(st, item, n, v);
    if (t == &PyDict_Type) {
        if (PyDict_GET_SIZE(v)) {
            /* no leaf itself, but may be a match field (DECISIONS.md 9) */
            if (mem && add_member(st, item, k, s_object, v, n) < 0)
                return -1;
            return walk_dict(st, v, n, item, depth);
        }
        return leaf_literal(st, item, n, K_OBJECT, "{}", 2);
    }
    if (t == &PyList_Type || t == &PyTuple_Type)
        return walk_list(st, v, n, k, mem, item, depth);
    if (v == Py_None)
        return leaf_row(st, item, n, K_NULL, -1);
    if (t == &PyBool_Type)
        return v == Py_True ? leaf_literal(st, item, n, K_BOOL, "true", 4)
                            : leaf_literal(st, item, n, K_BOOL, "false", 5);
    if (t == &PyLong_Type)
        return leaf_int(st, item, n, v);
    if (t == &PyFloat_Type)
        return leaf_float(st, item, n, PyFloat_AS_DOUBLE(v));
    PyObject *name = PyType_GetName(t);
    if (name == NULL)
        return -1;
    int rc = raise_unrepr(st, PyUnicode_FromFormat("value of type %U at '%U' has no JSON meaning",
                                                   name, st->nodes[n].suffix));
    Py_DECREF(name);
    return rc;
}

static int
walk_dict(State *st, PyObject *d, Py_ssize_t ctx, int64_t item, int32_t depth)
{
    if (enter(st) < 0)
        return -1;
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    int rc = 0;
    while (rc == 0 && PyDict_Next(d, &pos, &k, &v)) {
        /* owned for the duration: callbacks run Python code that could drop them */
        Py_INCREF(k);
        Py_INCREF(v);
        rc = walk_member(st, ctx, k, v, item, depth);
        Py_DECREF(k);
        Py_DECREF(v);
    }
    leave(st);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */

/* Error message of the pending exception if it leaves only the document out, else NULL with
 * the exception still set. */
static PyObject *
document_error(State *st)
{
    if (PyErr_ExceptionMatches(st->unrepr)) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        PyObject *msg = value ? PyObject_Str(value) : NULL;
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return msg;
    }
    if (PyErr_ExceptionMatches(PyExc_RecursionError)) {
        PyErr_Clear();
        return PyUnicode_FromString("document is nested too deeply to score");
    }
    return NULL;
}

/* The dict flatten.py builds its frames from; the column memory moves into Buffer objects. */
static PyObject *
build_result(State *st, PyObject *errors)
{
    struct {
        const char *name;
        void **data;
        size_t n, elem;
    } columns[] = {
        {"doc", (void **)&st->doc, st->n, sizeof(uint32_t)},
        {"item", (void **)&st->item, st->n, sizeof(int64_t)},
        {"node", (void **)&st->node, st->n, sizeof(uint32_t)},
        {"kind", (void **)&st->kind, st->n, 1},
        {"offsets", (void **)&st->off, st->n + 1, sizeof(int64_t)},
        {"text", (void **)&st->text, st->text_len, 1},
        {"valid", (void **)&st->valid, st->n, 1},
        {"is_null", (void **)&st->is_null, st->n, 1},
        {"empty_array", (void **)&st->empty_array, st->n, 1},
        {"item_item", (void **)&st->i_item, st->in, sizeof(int64_t)},
        {"item_doc", (void **)&st->i_doc, st->in, sizeof(uint32_t)},
        {"item_parent", (void **)&st->i_parent, st->in, sizeof(int64_t)},
        {"item_depth", (void **)&st->i_depth, st->in, sizeof(int32_t)},
        {"item_node", (void **)&st->i_node, st->in, sizeof(uint32_t)},
        {"item_index", (void **)&st->i_index, st->in, sizeof(int32_t)},
    };
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++) {
        PyObject *b = buffer_take(columns[i].data, columns[i].n * columns[i].elem);
        if (b == NULL || PyDict_SetItemString(out, columns[i].name, b) < 0) {
            Py_XDECREF(b);
            goto fail;
        }
        Py_DECREF(b);
    }
    /* per node: suffix, attribute, key, member (the key, for a direct member of an item) */
    const char *names[] = {"suffix", "attribute", "key", "member"};
    for (int c = 0; c < 4; c++) {
        PyObject *list = PyList_New((Py_ssize_t)st->n_nodes);
        if (list == NULL)
            goto fail;
        for (size_t i = 0; i < st->n_nodes; i++) {
            Node *n = &st->nodes[i];
            PyObject *key = n->key ? n->key : Py_None;
            PyObject *v = c == 0 ? n->suffix : c == 1 ? n->attr : c == 2 ? key
                        : n->member ? key : Py_None;
            Py_INCREF(v);
            PyList_SET_ITEM(list, (Py_ssize_t)i, v);
        }
        int rc = PyDict_SetItemString(out, names[c], list);
        Py_DECREF(list);
        if (rc < 0)
            goto fail;
    }
    PyObject *scalars[] = {
        PyLong_FromSize_t(st->n), PyLong_FromSize_t(st->null_count), PyLong_FromSize_t(st->in),
        PyLong_FromLongLong(st->next_item),
    };
    const char *scalar_names[] = {"rows", "null_count", "items", "next_item"};
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        bad = bad || scalars[i] == NULL ||
              PyDict_SetItemString(out, scalar_names[i], scalars[i]) < 0;
        Py_XDECREF(scalars[i]);
    }
    if (bad || PyDict_SetItemString(out, "members", st->members) < 0 ||
        PyDict_SetItemString(out, "errors", errors) < 0)
        goto fail;
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

PyDoc_STRVAR(flatten_doc,
"flatten(docs, item_base, empty_containers_are_null, segments, segment_cache, container_text,\n"
"        array_text, check_encodable, unrepresentable) -> dict | None\n\n"
"Column buffers of flatten.py's walk over docs; None when a document is neither None nor an\n"
"exact dict (the Python walker then handles the batch).");

static PyObject *
flatten(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "flatten() takes 9 positional arguments");
        return NULL;
    }
    PyObject *docs = args[0];
    long long item_base = PyLong_AsLongLong(args[1]);
    if (item_base == -1 && PyErr_Occurred())
        return NULL;
    int empty_null = PyObject_IsTrue(args[2]);
    if (empty_null < 0)
        return NULL;
    if (!PyDict_CheckExact(args[4]) || !PyType_Check(args[8])) {
        PyErr_SetString(PyExc_TypeError, "segment_cache must be a dict, unrepresentable a type");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(docs, "docs must be a sequence");
    if (seq == NULL)
        return NULL;
    for (Py_ssize_t pos = 0; pos < PySequence_Fast_GET_SIZE(seq); pos++) {
        PyObject *doc = PySequence_Fast_GET_ITEM(seq, pos);
        if (doc != Py_None && !PyDict_CheckExact(doc)) {
            Py_DECREF(seq);
            Py_RETURN_NONE;
        }
    }
    if (PySequence_Fast_GET_SIZE(seq) > (Py_ssize_t)UINT32_MAX) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_OverflowError, "too many documents in one batch");
        return NULL;
    }

    State st;
    memset(&st, 0, sizeof st);
    st.next_item = item_base;
    st.empty_null = empty_null;
    st.segments = args[3];
    st.seg_cache = args[4];
    st.container_text = args[5];
    st.array_text = args[6];
    st.check_encodable = args[7];
    st.unrepr = args[8];
    PyObject *errors = PyList_New(0), *result = NULL;
    st.members = PyList_New(0);
    st.table = malloc(64 * sizeof(Py_ssize_t));
    st.table_mask = 63;
    if (errors == NULL || st.members == NULL || st.table == NULL) {
        if (st.table == NULL)
            PyErr_NoMemory();
        goto fail;
    }
    for (size_t i = 0; i <= st.table_mask; i++)
        st.table[i] = -1;
    Py_INCREF(s_empty);
    Py_INCREF(s_empty);
    if (node_new(&st, s_empty, s_empty, NULL, -1, -1, 1, 0, 0) < 0 || leaves_grow(&st) < 0)
        goto fail;
    st.off[0] = 0;

    for (Py_ssize_t pos = 0; pos < PySequence_Fast_GET_SIZE(seq); pos++) {
        PyObject *doc = PySequence_Fast_GET_ITEM(seq, pos);
        if (doc == Py_None)
            continue;
        if (!PyDict_CheckExact(doc)) {
            PyErr_SetString(PyExc_RuntimeError, "docs changed while they were flattened");
            goto fail;
        }
        st.doc_pos = (uint32_t)pos;
        size_t n = st.n, text_len = st.text_len, in = st.in;
        Py_ssize_t n_members = PyList_GET_SIZE(st.members);
        Py_INCREF(doc);
        int rc = walk_dict(&st, doc, 0, -1, 0);
        Py_DECREF(doc);
        if (rc == 0)
            continue;
        PyObject *msg = document_error(&st);
        if (msg == NULL)
            goto fail;
        /* the document contributes nothing (item ids it drew stay used, as in flatten.py) */
        st.n = n;
        st.text_len = text_len;
        st.in = in;
        PyObject *where = PyLong_FromSsize_t(pos);
        PyObject *row = where ? PyTuple_Pack(2, where, msg) : NULL;
        Py_XDECREF(where);
        Py_DECREF(msg);
        rc = row == NULL || PyList_SetSlice(st.members, n_members, PY_SSIZE_T_MAX, NULL) < 0 ||
             PyList_Append(errors, row) < 0;
        Py_XDECREF(row);
        if (rc)
            goto fail;
    }

    for (size_t r = 0; r < st.n; r++)
        st.null_count += !st.valid[r];
    hint_rows = st.n;
    hint_text = st.text_len;
    hint_items = st.in;
    result = build_result(&st, errors);
fail:
    Py_DECREF(seq);
    Py_XDECREF(errors);
    state_free(&st);
    return result;
}

static PyMethodDef methods[] = {
    {"flatten", (PyCFunction)(void (*)(void))flatten, METH_FASTCALL, flatten_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_flatten",
    "Native flattening kernel for jsoneval_polars.flatten (see flatten.py for the contract).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__flatten(void)
{
    /* the whitespace of str.split() and the lower case of str.lower() on ASCII */
    for (int c = 0; c < 256; c++) {
        is_ws[c] = c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
        canon_of[c] = (unsigned char)(is_ws[c] ? ' ' : c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    if (PyType_Ready(&BufferType) < 0)
        return NULL;
#define INTERN(var, text)                                                               \
    if (var == NULL && (var = PyUnicode_InternFromString(text)) == NULL)                \
        return NULL;
    INTERN(s_empty, "")
    INTERN(s_space, " ")
    INTERN(s_brackets, "[]")
    INTERN(s_lower, "lower")
    INTERN(s_object, "object")
    INTERN(s_array, "array")
#undef INTERN
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL)
        return NULL;
    Py_INCREF(&BufferType);
    if (PyModule_AddObject(m, "Buffer", (PyObject *)&BufferType) < 0) {
        Py_DECREF(&BufferType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

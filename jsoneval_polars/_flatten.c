/* Native flattening kernel: the walk of flatten.py's Python walker, emitting column buffers.
 *
 * flatten.py is the reference: this file mirrors its walk_dict / walk_list branch for branch
 * (same type tests, same order, same messages) and calls back into flatten.py wherever the
 * Python walker calls a helper (_segments, _container_text, _array_text, _check_encodable), so
 * quoting rules, canonical JSON and error texts have one definition.
 *
 * The string columns come out in Polars' own layout, Arrow string views (16 bytes a row: the
 * length and either the bytes or a prefix and a place in a data buffer), so Polars takes them
 * without a copy or a conversion. A row's suffix / attribute / key / member depend only on its
 * path node; the few distinct nodes (list indices are never part of a suffix) have their views
 * made once, their bytes kept in one "paths" buffer, and each row copies the views.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* Kinds, in the order of values.KINDS. */
enum { K_NULL, K_BOOL, K_INT, K_FLOAT, K_STRING, K_ARRAY, K_OBJECT };
static const char *const kind_names[] = {"null", "bool", "int", "float", "string", "array",
                                         "object"};

#if defined(__GNUC__)
#define HOT_INLINE static inline __attribute__((always_inline))
#else
#define HOT_INLINE static inline
#endif

/* Nesting levels (objects and arrays) the walk enters at most: a level takes about 300 bytes of
 * C stack, so this stays within a small thread stack. Python's recursion limit (checked by
 * Py_EnterRecursiveCall at every level) stops the walk long before unless it was raised, and
 * extract.py parses no JSON nested deeper than 1024 levels. */
#define MAX_C_DEPTH 5000

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

#define HUGE_PAGE ((size_t)2 << 20)

/* Grows *p from old_n to n elements of elem bytes; *p is unchanged on failure.
 * The columns of a batch are tens of MB written once, and in a virtual machine a page fault per
 * 4 KiB costs about as much as the walk itself. So large blocks are aligned to, and asked to
 * be backed by, 2 MiB pages where the system grants them on request (numpy asks the same for
 * its large arrays); elsewhere this is a plain realloc. */
static int
resize(void **p, size_t old_n, size_t n, size_t elem)
{
    size_t bytes = n * elem;
#if defined(MADV_HUGEPAGE)
    if (bytes >= HUGE_PAGE) {
        size_t rounded = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
        void *q;
        if (posix_memalign(&q, HUGE_PAGE, rounded) != 0) {
            PyErr_NoMemory();
            return -1;
        }
        (void)madvise(q, rounded, MADV_HUGEPAGE); /* a hint: failure changes nothing */
        if (*p != NULL && old_n > 0)
            memcpy(q, *p, old_n * elem);
        free(*p);
        *p = q;
        return 0;
    }
#else
    (void)old_n;
#endif
    void *q = realloc(*p, bytes);
    if (q == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *p = q;
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Arrow string views and the data buffers behind them */

typedef struct {
    uint64_t lo, hi; /* little-endian: length (32 bits) then 12 bytes, or prefix, buffer, offset */
} View;

/* Bytes for long strings. A view's offset is an int32, so the arena is cut into segments of
 * `seg` bytes (each handed to Arrow as one buffer) and no string straddles two. */
typedef struct {
    char *p;
    size_t len, cap, seg;
} Arena;

static inline int
arena_reserve(Arena *a, size_t n, size_t first)
{
    if (n <= a->cap - a->len)
        return 0;
    size_t cap = a->cap;
    while (n > cap - a->len)
        if (next_cap(cap, first, &cap) < 0)
            return -1;
    /* all of the old block: bytes written past len may be waiting for arena_keep */
    if (resize((void **)&a->p, a->cap, cap, 1) < 0)
        return -1;
    a->cap = cap;
    return 0;
}

static inline View
view_inline(const char *s, size_t n) /* n <= 12 */
{
    char b[16] = {0};
    uint32_t len = (uint32_t)n;
    memcpy(b, &len, 4);
    for (size_t i = 0; i < n; i++) /* short: a loop beats a call to memcpy */
        b[4 + i] = s[i];
    View v;
    memcpy(&v, b, 16);
    return v;
}

/* The view of n > 12 bytes at a->p + at, inside one segment. */
static inline View
view_long(const Arena *a, size_t at, size_t n)
{
    char b[16];
    uint32_t len = (uint32_t)n, buffer = (uint32_t)(at / a->seg), offset = (uint32_t)(at % a->seg);
    memcpy(b, &len, 4);
    memcpy(b + 4, a->p + at, 4);
    memcpy(b + 8, &buffer, 4);
    memcpy(b + 12, &offset, 4);
    View v;
    memcpy(&v, b, 16);
    return v;
}

/* Keeps the n bytes written at the end of the arena (n > 12) and returns their view; they move
 * to the next segment when they would straddle a boundary. */
static int
arena_keep(Arena *a, size_t n, size_t first, View *out)
{
    if (n > a->seg || n > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "a string longer than 2 GiB cannot be a column value");
        return -1;
    }
    size_t at = a->len;
    if (at / a->seg != (at + n - 1) / a->seg) {
        size_t boundary = (at / a->seg + 1) * a->seg;
        if (arena_reserve(a, boundary + n - a->len, first) < 0)
            return -1;
        memmove(a->p + boundary, a->p + at, n);
        at = boundary;
    }
    *out = view_long(a, at, n);
    a->len = at + n;
    return 0;
}

/* The view of a str's UTF-8, its bytes (if long) appended to the arena. */
static int
arena_view(Arena *a, PyObject *s, View *out)
{
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    if (u == NULL)
        return -1;
    if (n <= 12) {
        *out = view_inline(u, (size_t)n);
        return 0;
    }
    if (arena_reserve(a, (size_t)n, 0) < 0)
        return -1;
    memcpy(a->p + a->len, u, (size_t)n);
    return arena_keep(a, (size_t)n, 0, out);
}

/* ---------------------------------------------------------------------------------------- */
/* State */

/* A path node is a walk_dict context (suffix, attribute, root, item_root) and, for the rows
 * written at it, the (suffix, attribute, key, member) of a row. */
typedef struct {
    PyObject *suffix, *attr; /* str, owned */
    PyObject *key;           /* str, owned; NULL for the root */
    View v_suffix, v_attr, v_key, v_member; /* v_member: v_key for a member of an item */
    Py_hash_t hash;          /* hash of key */
    Py_ssize_t parent;       /* context the key was looked up in (-1: root or record context) */
    Py_ssize_t records;      /* record context of a list of records at this node, or -1 */
    /* the child met first in this context, and the sibling met after this node, last time:
     * documents of one batch mostly share a key order (and, parsed by orjson, key objects) */
    Py_ssize_t first, next;
    unsigned char root, item_root, member;
} Node;

typedef struct {
    /* leaf rows */
    size_t n, cap;
    uint32_t *doc;
    int64_t *item;
    View *suffix, *attr, *key, *member, *kind, *text;
    uint8_t *member_valid, *text_valid, *is_null, *empty_array;
    Arena texts, paths;
    /* item rows */
    size_t in, icap;
    int64_t *i_item, *i_parent;
    uint32_t *i_doc;
    int32_t *i_depth, *i_index;
    View *i_attr, *i_suffix;
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

static View kind_views[7];
static const View null_view;

static void
state_free(State *st)
{
    void *arrays[] = {
        st->doc, st->item, st->suffix, st->attr, st->key, st->member, st->kind, st->text,
        st->member_valid, st->text_valid, st->is_null, st->empty_array, st->texts.p,
        st->paths.p, st->i_item, st->i_parent, st->i_doc, st->i_depth, st->i_index,
        st->i_attr, st->i_suffix, st->table,
    };
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    for (size_t i = 0; i < st->n_nodes; i++) {
        Py_XDECREF(st->nodes[i].suffix);
        Py_XDECREF(st->nodes[i].attr);
        Py_XDECREF(st->nodes[i].key);
    }
    free(st->nodes);
    Py_XDECREF(st->members);
}

/* Room for one more leaf row in every leaf column. */
static int
leaves_grow(State *st)
{
    size_t cap;
    if (next_cap(st->cap, hint_rows, &cap) < 0 ||
        resize((void **)&st->doc, st->cap, cap, sizeof(*st->doc)) < 0 ||
        resize((void **)&st->item, st->cap, cap, sizeof(*st->item)) < 0 ||
        resize((void **)&st->suffix, st->cap, cap, sizeof(View)) < 0 ||
        resize((void **)&st->attr, st->cap, cap, sizeof(View)) < 0 ||
        resize((void **)&st->key, st->cap, cap, sizeof(View)) < 0 ||
        resize((void **)&st->member, st->cap, cap, sizeof(View)) < 0 ||
        resize((void **)&st->kind, st->cap, cap, sizeof(View)) < 0 ||
        resize((void **)&st->text, st->cap, cap, sizeof(View)) < 0 ||
        resize((void **)&st->member_valid, st->cap, cap, 1) < 0 ||
        resize((void **)&st->text_valid, st->cap, cap, 1) < 0 ||
        resize((void **)&st->is_null, st->cap, cap, 1) < 0 ||
        resize((void **)&st->empty_array, st->cap, cap, 1) < 0)
        return -1;
    st->cap = cap;
    return 0;
}

static int
items_grow(State *st)
{
    size_t cap;
    if (next_cap(st->icap, hint_items, &cap) < 0 ||
        resize((void **)&st->i_item, st->icap, cap, sizeof(*st->i_item)) < 0 ||
        resize((void **)&st->i_parent, st->icap, cap, sizeof(*st->i_parent)) < 0 ||
        resize((void **)&st->i_doc, st->icap, cap, sizeof(*st->i_doc)) < 0 ||
        resize((void **)&st->i_depth, st->icap, cap, sizeof(*st->i_depth)) < 0 ||
        resize((void **)&st->i_index, st->icap, cap, sizeof(*st->i_index)) < 0 ||
        resize((void **)&st->i_attr, st->icap, cap, sizeof(View)) < 0 ||
        resize((void **)&st->i_suffix, st->icap, cap, sizeof(View)) < 0)
        return -1;
    st->icap = cap;
    return 0;
}

/* Room for n bytes of text at the end of the text arena (where a leaf's text is written). */
static inline int
text_reserve(State *st, size_t n)
{
    return arena_reserve(&st->texts, n, hint_text);
}

/* A leaf row whose text (tlen bytes, or null when tlen < 0) is written at the end of the text
 * arena: kept there if long, else copied into the view (and the space reused). Runs for every
 * leaf, so it is inlined, where the kind is mostly a constant that folds the tests on it. */
HOT_INLINE int
leaf_row(State *st, int64_t item, Py_ssize_t node, int kind, Py_ssize_t tlen)
{
    if (st->n == st->cap && leaves_grow(st) < 0)
        return -1;
    const char *t = tlen > 0 ? st->texts.p + st->texts.len : NULL;
    /* is_null and empty_array as flatten.py's expressions define them */
    int two = tlen == 2 && ((t[0] == '[' && t[1] == ']') || (t[0] == '{' && t[1] == '}'));
    uint8_t is_null = tlen < 0 || (kind == K_STRING && tlen == 0) ||
                      (st->empty_null && (kind == K_ARRAY || kind == K_OBJECT) && two);
    uint8_t empty_array = kind == K_ARRAY && two && t[0] == '[';
    View text = null_view;
    if (tlen > 12) {
        if (arena_keep(&st->texts, (size_t)tlen, hint_text, &text) < 0)
            return -1;
    }
    else if (tlen >= 0)
        text = view_inline(t, (size_t)tlen);
    size_t r = st->n++;
    const Node *nd = &st->nodes[node];
    st->doc[r] = st->doc_pos;
    st->item[r] = item;
    st->suffix[r] = nd->v_suffix;
    st->attr[r] = nd->v_attr;
    st->key[r] = nd->v_key;
    st->member[r] = nd->v_member;
    st->kind[r] = kind_views[kind];
    st->text[r] = text;
    st->member_valid[r] = nd->member;
    st->text_valid[r] = tlen >= 0;
    st->is_null[r] = is_null;
    st->empty_array[r] = empty_array;
    return 0;
}

static inline int
leaf_literal(State *st, int64_t item, Py_ssize_t node, int kind, const char *s, size_t n)
{
    if (text_reserve(st, n) < 0)
        return -1;
    memcpy(st->texts.p + st->texts.len, s, n);
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
    st->i_index[r] = index;
    st->i_attr[r] = st->nodes[node].v_attr;
    st->i_suffix[r] = st->nodes[node].v_suffix;
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Nodes */

/* Steals suffix and attr (also on failure); borrows key. key_view: the view of key, or NULL to
 * make it. */
static Py_ssize_t
node_new(State *st, PyObject *suffix, PyObject *attr, PyObject *key, const View *key_view,
         Py_hash_t hash, Py_ssize_t parent, int root, int item_root, int member)
{
    size_t cap = st->cap_nodes;
    if (suffix == NULL || attr == NULL ||
        (st->n_nodes == cap && (next_cap(cap, 0, &cap) < 0 ||
                                resize((void **)&st->nodes, st->n_nodes, cap, sizeof(Node)) < 0))) {
        Py_XDECREF(suffix);
        Py_XDECREF(attr);
        return -1;
    }
    st->cap_nodes = cap;
    Node *n = &st->nodes[st->n_nodes];
    memset(n, 0, sizeof *n);
    n->suffix = suffix;
    n->attr = attr;
    Py_XINCREF(key);
    n->key = key;
    st->n_nodes++; /* from here state_free releases the references */
    if (arena_view(&st->paths, suffix, &n->v_suffix) < 0 ||
        arena_view(&st->paths, attr, &n->v_attr) < 0)
        return -1;
    if (key_view)
        n->v_key = *key_view;
    else if (key && arena_view(&st->paths, key, &n->v_key) < 0)
        return -1;
    n->hash = hash;
    n->parent = parent;
    n->records = n->first = n->next = -1;
    n->root = (unsigned char)root;
    n->item_root = (unsigned char)item_root;
    n->member = (unsigned char)member;
    n->v_member = member ? n->v_key : null_view;
    return (Py_ssize_t)(st->n_nodes - 1);
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
    Py_ssize_t id = node_new(st, s, at, k, NULL, hash, ctx, 0, 0, member);
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
    View key_view = st->nodes[n].v_key;
    Py_INCREF(s_empty);
    Py_ssize_t id = node_new(st, s_empty, PyUnicode_Concat(st->nodes[n].attr, s_brackets),
                             st->nodes[n].key, &key_view, -1, -1, 0, 1, 0);
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

/* " ".join(s.split()).lower() of an ASCII string into dst (n bytes available); returns the
 * length. Branch-free per byte: every byte is written, the write position only advances past
 * a whitespace byte that follows a kept byte, and a trailing space is cut at the end. Eight
 * bytes at a time where they need no more than lower-casing (no whitespace but single spaces
 * after a kept byte), which is most of ordinary text. */
static size_t
canon_ascii(const unsigned char *src, size_t n, char *dst)
{
    size_t w = 0, i = 0;
    unsigned prev_ws = 1;
    while (i < n) {
        size_t stop = n - i < 8 ? n : i + 8;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (stop == i + 8) {
            /* exact per-byte tests: bytes are < 0x80, so no sum carries into the next byte */
            const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
            uint64_t x, y;
            memcpy(&x, src + i, 8);
            uint64_t low = ~(x + 0x5F * ones) & highs; /* < 0x21 */
            uint64_t sp = x ^ (0x20 * ones);
            uint64_t space = ~(((sp & 0x7F * ones) + 0x7F * ones) | sp) & highs;
            uint64_t after_ws = (space << 8) | (prev_ws ? 0x80u : 0u);
            if (low == space && !(space & after_ws)) {
                uint64_t upper = (x + 0x3F * ones) & ~(x + 0x25 * ones) & highs; /* A-Z */
                y = x | (upper >> 2);
                memcpy(dst + w, &y, 8);
                w += 8;
                i += 8;
                prev_ws = (unsigned)(space >> 63);
                continue;
            }
        }
#endif
        for (; i < stop; i++) {
            unsigned ws = is_ws[src[i]];
            dst[w] = (char)canon_of[src[i]];
            w += !(ws & prev_ws);
            prev_ws = ws;
        }
    }
    return w - (w > 0 && prev_ws);
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
        size_t w = canon_ascii(src, n, st->texts.p + st->texts.len);
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

static const char digit_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Decimal text of x into buf (>= 21 bytes); returns the length. Written in place from the
 * end: a copy of a few bytes would become a call to memcpy. */
static size_t
format_i64(char *buf, long long x)
{
    unsigned long long u = x < 0 ? 0ull - (unsigned long long)x : (unsigned long long)x;
    size_t n = x < 0, digits = 1;
    for (unsigned long long t = u; t >= 10; t /= 10)
        digits++;
    if (x < 0)
        buf[0] = '-';
    char *p = buf + n + digits;
    while (u >= 100) {
        const char *d = digit_pairs + 2 * (u % 100);
        *--p = d[1];
        *--p = d[0];
        u /= 100;
    }
    if (u >= 10) {
        *--p = digit_pairs[2 * u + 1];
        *--p = digit_pairs[2 * u];
    }
    else
        *--p = (char)('0' + u);
    return n + digits;
}

static int
leaf_int(State *st, int64_t item, Py_ssize_t node, PyObject *v)
{
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (!overflow) {
        if (text_reserve(st, 24) < 0)
            return -1;
        size_t n = format_i64(st->texts.p + st->texts.len, x);
        return leaf_row(st, item, node, K_INT, (Py_ssize_t)n);
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
 * few digits (prices, measurements): dtoa's bignum search costs ~10x more than this.
 * m / 10**k reads back as x exactly when the division of the two exact doubles gives x (IEEE
 * division rounds correctly). Let w = ulp(x) * 10**k. Any m that reads back as x lies within
 * w/2 of x * 10**k, so within 1.5 w of its computed value s; while w < 1/4 that can only be
 * round(s). k rises from 1, so the first hit is the shortest string, and the only one of its
 * length: what repr prints (in fixed notation in this range).
 * Returns the length written to buf (>= 48 bytes), or 0 to ask for the general algorithm. */
static size_t
short_repr(double x, char *buf)
{
    double a = fabs(x), up;
    if (!(a >= 1e-4 && a < 9007199254740992.0))
        return 0;
    uint64_t bits;
    memcpy(&bits, &a, 8);
    bits++; /* the next double up: a is positive and finite */
    memcpy(&up, &bits, 8);
    double ulp = up - a;
    for (int k = 1; k <= 22; k++) {
        double p = pow10_exact[k], s = a * p, w = ulp * p;
        if (s >= 9007199254740992.0 || w >= 0.25)
            return 0;
        double m = (double)(int64_t)(s + 0.5); /* round(s): s is positive */
        if (fabs(s - m) > 1.5 * w || m / p != a)
            continue;
        uint64_t digits = (uint64_t)m, div = (uint64_t)p, frac = digits % div;
        size_t n = 0;
        if (x < 0)
            buf[n++] = '-';
        n += format_i64(buf + n, (long long)(digits / div));
        buf[n++] = '.';
        for (int i = k - 1; i >= 0; i--) {
            buf[n + (size_t)i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        return n + (size_t)k;
    }
    return 0;
}

/* values.canonical_float */
static int
leaf_float(State *st, int64_t item, Py_ssize_t node, double x)
{
    if (isnan(x))
        return leaf_row(st, item, node, K_FLOAT, -1);
    if (text_reserve(st, 48) < 0)
        return -1;
    char *dst = st->texts.p + st->texts.len;
    size_t n;
    if (fabs(x) < 9007199254740992.0 && x == (double)(int64_t)x)
        n = format_i64(dst, (long long)x);
    else
        n = short_repr(x, dst);
    if (n)
        return leaf_row(st, item, node, K_FLOAT, (Py_ssize_t)n);
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

/* One member k: v of a dict walked in context ctx (flatten.py walk_dict's loop body); *prev is
 * the node of the member before it in this dict (-1 for the first). */
static int
walk_member(State *st, Py_ssize_t ctx, PyObject *k, PyObject *v, int64_t item, int32_t depth,
            Py_ssize_t *prev)
{
    if (!PyUnicode_CheckExact(k))
        return raise_unrepr(st, PyUnicode_FromFormat("object key %R at '%U' is not a string", k,
                                                     st->nodes[ctx].suffix));
    Py_ssize_t *link = *prev >= 0 ? &st->nodes[*prev].next : &st->nodes[ctx].first;
    Py_ssize_t n = *link;
    if (n < 0 || st->nodes[n].key != k) {
        n = child_node(st, ctx, k); /* may move st->nodes */
        if (n < 0)
            return -1;
        *(*prev >= 0 ? &st->nodes[*prev].next : &st->nodes[ctx].first) = n;
    }
    *prev = n;
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
    Py_ssize_t pos = 0, prev = -1;
    PyObject *k, *v;
    int rc = 0;
    while (rc == 0 && PyDict_Next(d, &pos, &k, &v)) {
        /* owned for the duration: callbacks run Python code that could drop them */
        Py_INCREF(k);
        Py_INCREF(v);
        rc = walk_member(st, ctx, k, v, item, depth, &prev);
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

/* The validity bitmap (Arrow: LSB first) of a byte mask; NULL with *nulls = 0 when nothing is
 * null (Arrow then needs no bitmap). */
static PyObject *
bitmap(const uint8_t *mask, size_t n, size_t *nulls)
{
    size_t ones = 0, whole = n / 8 * 8;
    for (size_t r = 0; r < n; r++)
        ones += mask[r];
    *nulls = n - ones;
    if (ones == n)
        Py_RETURN_NONE;
    uint8_t *bits = calloc((n + 7) / 8, 1);
    if (bits == NULL)
        return PyErr_NoMemory();
    for (size_t r = 0; r < whole; r += 8) {
        uint64_t x; /* eight 0/1 bytes; the product gathers them into its top byte */
        memcpy(&x, mask + r, 8);
        bits[r / 8] = (uint8_t)((x * 0x0102040810204080ull) >> 56);
    }
    for (size_t r = whole; r < n; r++)
        bits[r >> 3] |= (uint8_t)(mask[r] << (r & 7));
    void *data = bits;
    return buffer_take(&data, (n + 7) / 8);
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
        {"suffix", (void **)&st->suffix, st->n, sizeof(View)},
        {"attribute", (void **)&st->attr, st->n, sizeof(View)},
        {"key", (void **)&st->key, st->n, sizeof(View)},
        {"member", (void **)&st->member, st->n, sizeof(View)},
        {"kind", (void **)&st->kind, st->n, sizeof(View)},
        {"text", (void **)&st->text, st->n, sizeof(View)},
        {"is_null", (void **)&st->is_null, st->n, 1},
        {"empty_array", (void **)&st->empty_array, st->n, 1},
        {"text_data", (void **)&st->texts.p, st->texts.len, 1},
        {"path_data", (void **)&st->paths.p, st->paths.len, 1},
        {"item_item", (void **)&st->i_item, st->in, sizeof(int64_t)},
        {"item_doc", (void **)&st->i_doc, st->in, sizeof(uint32_t)},
        {"item_parent", (void **)&st->i_parent, st->in, sizeof(int64_t)},
        {"item_depth", (void **)&st->i_depth, st->in, sizeof(int32_t)},
        {"item_index", (void **)&st->i_index, st->in, sizeof(int32_t)},
        {"list_attribute", (void **)&st->i_attr, st->in, sizeof(View)},
        {"list_suffix", (void **)&st->i_suffix, st->in, sizeof(View)},
    };
    size_t member_nulls, text_nulls;
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    PyObject *member_valid = bitmap(st->member_valid, st->n, &member_nulls);
    PyObject *text_valid = member_valid ? bitmap(st->text_valid, st->n, &text_nulls) : NULL;
    int bad = text_valid == NULL || PyDict_SetItemString(out, "member_valid", member_valid) < 0 ||
              PyDict_SetItemString(out, "text_valid", text_valid) < 0;
    Py_XDECREF(member_valid);
    Py_XDECREF(text_valid);
    if (bad)
        goto fail;
    for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++) {
        PyObject *b = buffer_take(columns[i].data, columns[i].n * columns[i].elem);
        if (b == NULL || PyDict_SetItemString(out, columns[i].name, b) < 0) {
            Py_XDECREF(b);
            goto fail;
        }
        Py_DECREF(b);
    }
    struct {
        const char *name;
        PyObject *value;
    } scalars[] = {
        {"rows", PyLong_FromSize_t(st->n)},
        {"items", PyLong_FromSize_t(st->in)},
        {"member_nulls", PyLong_FromSize_t(member_nulls)},
        {"text_nulls", PyLong_FromSize_t(text_nulls)},
        {"next_item", PyLong_FromLongLong(st->next_item)},
    };
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        bad = bad || scalars[i].value == NULL ||
              PyDict_SetItemString(out, scalars[i].name, scalars[i].value) < 0;
        Py_XDECREF(scalars[i].value);
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
"        array_text, check_encodable, unrepresentable, segment_size) -> dict | None\n\n"
"Column buffers of flatten.py's walk over docs; None when a document is neither None nor an\n"
"exact dict (the Python walker then handles the batch).");

static PyObject *
flatten(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "flatten() takes 10 positional arguments");
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
    /* the size of the data buffers: 2**31 but in tests, which cut strings across several */
    long long seg = PyLong_AsLongLong(args[9]);
    if (seg == -1 && PyErr_Occurred())
        return NULL;
    if (seg < 16 || seg > (long long)INT32_MAX + 1) {
        PyErr_SetString(PyExc_ValueError, "segment_size must be in [16, 2**31]");
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
    st.texts.seg = st.paths.seg = (size_t)seg;
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
    if (node_new(&st, s_empty, s_empty, NULL, NULL, -1, -1, 1, 0, 0) < 0)
        goto fail;

    for (Py_ssize_t pos = 0; pos < PySequence_Fast_GET_SIZE(seq); pos++) {
        PyObject *doc = PySequence_Fast_GET_ITEM(seq, pos);
        if (doc == Py_None)
            continue;
        if (!PyDict_CheckExact(doc)) {
            PyErr_SetString(PyExc_RuntimeError, "docs changed while they were flattened");
            goto fail;
        }
        st.doc_pos = (uint32_t)pos;
        size_t n = st.n, text_len = st.texts.len, in = st.in;
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
        st.texts.len = text_len;
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

    hint_rows = st.n;
    hint_text = st.texts.len;
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
    for (int k = 0; k < 7; k++)
        kind_views[k] = view_inline(kind_names[k], strlen(kind_names[k]));
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

/* lua_embed.c: loading the shipped Lua library from its bytecode
 * compiled at build time (lua_embed.h). */
#include "lua_embed.h"

#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/el_common.h"

/* Bytes of a Lua 5.4 binary chunk before the main function's source
 * name (lundump.c checkHeader, then the upvalue count): signature (4),
 * version, format, LUAC_DATA (6), three type sizes, LUAC_INT, LUAC_NUM. */
#define HEAD_LEN \
  (4 + 1 + 1 + 6 + 3 + sizeof(lua_Integer) + sizeof(lua_Number) + 1)

/* lua_Reader over a binary chunk with its main source name replaced:
 * bc[0..head), then name (its encoded size and bytes), then
 * bc[tail..len). */
typedef struct {
  const unsigned char *bc;
  size_t head, tail, len;
  const char *name; /* the new name, encoded */
  size_t name_len;
  int part;
} reader_t;

static const char *read_part(lua_State *L, void *ud, size_t *size) {
  (void)L;
  reader_t *r = ud;
  switch (r->part++) {
  case 0:
    *size = r->head;
    return (const char *)r->bc;
  case 1:
    *size = r->name_len;
    return r->name;
  case 2:
    *size = r->len - r->tail;
    return (const char *)r->bc + r->tail;
  default:
    *size = 0;
    return NULL;
  }
}

/* The end of the source name in bc (its size, lundump.c loadSize: 7 bits
 * a byte, most significant first, the last byte marked 0x80, then size - 1
 * bytes), or 0 when the chunk is not laid out so. */
static size_t name_end(const unsigned char *bc, size_t len) {
  if (len < HEAD_LEN || memcmp(bc, LUA_SIGNATURE, 4) != 0) return 0;
  size_t i = HEAD_LEN, size = 0;
  for (;;) {
    if (i >= len || size > (SIZE_MAX >> 8)) return 0;
    unsigned char b = bc[i++];
    size = (size << 7) | (b & 0x7f);
    if (b & 0x80) break;
  }
  if (size == 0 || size - 1 > len - i) return 0;
  return i + size - 1;
}

/* Encodes "@path" as dumped strings are (lundump.c) into out; returns its
 * length, or 0 if it does not fit. */
static size_t encode_name(const char *path, char *out, size_t cap) {
  size_t n = strlen(path) + 1, size = n + 1; /* "@" + path, size = len+1 */
  unsigned char v[16];
  int k = 0;
  do {
    v[k++] = size & 0x7f;
    size >>= 7;
  } while (size != 0);
  if ((size_t)k + n > cap) return 0;
  size_t o = 0;
  while (k > 0) {
    unsigned char b = v[--k];
    out[o++] = (char)(k == 0 ? (b | 0x80) : b);
  }
  out[o++] = '@';
  memcpy(out + o, path, n - 1);
  return o + n - 1;
}

/* The shipped script whose source is exactly the file's bytes, or NULL.
 * Reads the file only when a script has its size. */
static const el__lua_embedded_t *match(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return NULL;
  const el__lua_embedded_t *hit = NULL;
  for (size_t i = 0; i < el__lua_nembedded && !hit; i++)
    if (el__lua_embedded[i].src_len == (size_t)st.st_size)
      hit = &el__lua_embedded[i];
  if (!hit) return NULL;
  FILE *f = fopen(path, "rbe");
  if (!f) return NULL;
  char *text = el_malloc(hit->src_len + 1);
  size_t got = text ? fread(text, 1, hit->src_len + 1, f) : 0;
  fclose(f);
  const el__lua_embedded_t *same = NULL;
  /* Several scripts may share a size: compare with each. */
  for (size_t i = 0;
       text && got == hit->src_len && i < el__lua_nembedded && !same; i++)
    if (el__lua_embedded[i].src_len == got &&
        memcmp(el__lua_embedded[i].src, text, got) == 0)
      same = &el__lua_embedded[i];
  el_free(text);
  return same;
}

int el__lua_loadfile(lua_State *L, const char *path) {
  const el__lua_embedded_t *e = match(path);
  if (e) {
    char name[4200];
    reader_t r = {
        .bc = e->bc, .head = HEAD_LEN, .len = e->bc_len, .name = name};
    r.tail = name_end(e->bc, e->bc_len);
    r.name_len = encode_name(path, name, sizeof name);
    if (r.tail && r.name_len) {
      lua_pushfstring(L, "@%s", path); /* the chunk name of load errors */
      int st = lua_load(L, read_part, &r, lua_tostring(L, -1), "b");
      lua_remove(L, -2);
      if (st == LUA_OK) {
        el_log(EL_LOG_DEBUG, "Lua: %s loaded precompiled (%s)", path, e->name);
        return LUA_OK;
      }
      /* Bytecode of another Lua: compile the text instead (same result). */
      el_log(EL_LOG_DEBUG, "precompiled %s not loaded (%s): compiling it",
             e->name, lua_tostring(L, -1));
      lua_pop(L, 1);
    }
  }
  return luaL_loadfile(L, path);
}

/* package.searchers[2]: upvalue 1 is the package table. */
static int search_lua(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  lua_getfield(L, lua_upvalueindex(1), "path");
  if (!lua_isstring(L, -1))
    return luaL_error(L, "'package.path' must be a string");
  const char *path = lua_tostring(L, -1);
  lua_getfield(L, lua_upvalueindex(1), "searchpath");
  lua_pushstring(L, name);
  lua_pushstring(L, path);
  lua_call(L, 2, 2);
  if (lua_isnil(L, -2)) return 1; /* not found: the "no file" list */
  lua_pop(L, 1);
  const char *file = lua_tostring(L, -1);
  if (el__lua_loadfile(L, file) != LUA_OK)
    return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s",
                      name, file, lua_tostring(L, -1));
  lua_pushstring(L, file); /* the loader's second argument */
  return 2;
}

void el__lua_embed_install(lua_State *L) {
  lua_getglobal(L, "package");
  if (lua_getfield(L, -1, "searchers") == LUA_TTABLE) {
    lua_pushvalue(L, -2);
    lua_pushcclosure(L, search_lua, 1);
    lua_rawseti(L, -2, 2);
  }
  lua_pop(L, 2);
}

/* lua_embed.h: the shipped Lua library, precompiled at build time
 * (cmake/el_lua_embed.c writes the table below into the build's
 * generated/lua_embedded.c), and the host's loader that uses it (issue 16,
 * docs/performance.md "Start-up"; docs/lua-api.md §1 "Modules").
 *
 * A script is loaded from its bytecode only when the file the search
 * found (package.path, so $EVENTLOG_LIVE_LUA_PATH and a script's own
 * folder still win) holds exactly the bytes it was compiled from: an
 * edited copy, a newer source tree or any other file is compiled from
 * its text, as before. The bytecode keeps its debug information, and its
 * chunk is renamed "@<path>" when loaded, so messages and tracebacks
 * read `<path>:<line>:` as for a compiled-at-run-time script. */
#ifndef EL_LUA_EMBED_H
#define EL_LUA_EMBED_H

#include <stddef.h>

/* The chunk name the build tool compiles under; the loader replaces it. */
#define EL_LUA_EMBED_CHUNK "=embedded"

/* One shipped script. */
typedef struct {
  const char *name;         /* path under lua/, e.g.
                               "eventlog_live/processors/main.lua" */
  const unsigned char *src; /* its source bytes */
  size_t src_len;
  const unsigned char *bc; /* lua_dump of it, debug information kept */
  size_t bc_len;
} el__lua_embedded_t;

/* The table, ended by a row of zeros, and its length (generated). */
extern const el__lua_embedded_t el__lua_embedded[];
extern const size_t el__lua_nembedded;

struct lua_State;

/* Like luaL_loadfile(L, path): pushes the chunk of the file at path as a
 * function named "@<path>" and returns LUA_OK, or pushes the message and
 * returns an error status (LUA_ERRFILE: cannot open or read, naming
 * path; LUA_ERRSYNTAX with file:line). When the file's bytes equal a
 * shipped script's, the function comes from that script's bytecode (no
 * compilation; logged at level debug: "Lua: <path> loaded precompiled
 * (<name>)"); otherwise, or if the bytecode does not load (a Lua of
 * another version), from luaL_loadfile itself. [-0, +1, m] */
int el__lua_loadfile(struct lua_State *L, const char *path);

/* Replaces the Lua file searcher (package.searchers[2]) by one that finds
 * the module on package.path as Lua's does (same "no file ..." message
 * when not found, same "error loading module" error) and loads it with
 * el__lua_loadfile. Call after luaL_openlibs. [-0, +0, m] */
void el__lua_embed_install(struct lua_State *L);

#endif /* EL_LUA_EMBED_H */

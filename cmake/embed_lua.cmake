# embed_lua.cmake -- writes a C file holding every Lua script, with its SHA1,
# so the library needs no files at run time: the Redis adapter sends this
# text to Redis and the memory backend runs the same text in its own Lua.
# Usage: cmake -DOUT=<file.c> -DSCRIPTS="<a.lua;b.lua>" [-DOPS=<file.h>]
#   [-DEXPANDED=<dir>] -P embed_lua.cmake
#
# Each script is an op, and its header is the op's contract: the
# comment lines it opens with name the file ("-- <name>.lua -- what it
# does"), then state its KEYS ("-- KEYS..."), ARGV ("-- ARGV...") and reply
# ("-- Returns: ..."), each of the three required (adapters/scripts/lua/
# lib/README). With OPS, the op table is written from the file names to
# that header: FLEET__OPS_<PRIMITIVE>(XX), one XX(ID, "name", NULL) per
# script, the ID the name upper-cased (store_put.lua: STORE_PUT) and the
# primitive the name's first word (STORE; CORE for a name of one word),
# and FLEET__OPS_SCRIPTS(XX), all of them; adapters/backend.h makes the
# op enum of it and of adapters/ops/commands.h (the plain-command ops).
# FLEET__OPS_FENCED(XX), XX(ID) per fenced op, lists the scripts whose
# header says "A fenced op".
#
# Redis scripts cannot call each other, so code several scripts share lives
# in lib/<name>.lua beside them, and a line "--#include <name>" in a script
# is replaced by that file, expanded the same way, where the line stands:
# a lib may include another, up to 8 deep. Each lib goes in once per
# script, at its first include line (depth first, in text order); a later
# line naming it is dropped, so that a lib's local functions and state
# exist once and before any code that follows its first include. The SHA1
# is that of the expanded text, which is what EVALSHA needs.
#
# Each script comes in two copies: fleet__scripts, which the Redis adapter
# and the memory backend run, and fleet__scripts_sharded, which the cluster
# adapter runs. They differ only where a script includes lib/wake.lua: its
# line "local wake_sharded" gets "= false" in the first, "= true" in the
# second, so that publish_wake() knows PUBLISH from SPUBLISH without asking
# the server (which it does when the file runs as it stands).
#
# With EXPANDED, each script is also written, expanded, to <dir>/<name>.lua
# as it stands (its "local wake_sharded" line unset, so that it asks the
# server once whether it runs on a cluster): the files other languages
# and redis-cli run (installed under share/fleet/lua, docs/queue.md).
# Quoted arguments of if() are strings, never variable names.
cmake_policy(SET CMP0054 NEW)
# if(... IN_LIST ...).
cmake_policy(SET CMP0057 NEW)
# Writes `content` to `file` unless it holds that already, so that what
# depends on the file is not rebuilt for nothing.
function(embed_write file content)
  set(old "")
  if(EXISTS "${file}")
    file(READ "${file}" old)
  endif()
  if(NOT old STREQUAL content)
    file(WRITE "${file}" "${content}")
  endif()
endfunction()
# `text` with its "--#include <lib>" lines expanded from `dir`/lib, into
# the variable `out`; `depth` counts the includes around it. The libs
# expanded so far in this script are the global property embed_seen.
function(embed_expand path dir text depth out)
  set(done "")
  while(1)
    string(REGEX MATCH "--#include ([a-z_]+)\n" inc "${text}")
    if(inc STREQUAL "")
      break()
    endif()
    set(lib "${CMAKE_MATCH_1}")
    string(FIND "${text}" "${inc}" at)
    string(LENGTH "${inc}" len)
    string(SUBSTRING "${text}" 0 ${at} before)
    math(EXPR at "${at} + ${len}")
    string(SUBSTRING "${text}" ${at} -1 text)
    string(APPEND done "${before}")
    get_property(seen GLOBAL PROPERTY embed_seen)
    if(NOT lib IN_LIST seen)
      if(NOT EXISTS "${dir}/lib/${lib}.lua")
        message(FATAL_ERROR "${path}: no lib/${lib}.lua to include")
      endif()
      if(depth GREATER_EQUAL 8)
        message(FATAL_ERROR "${path}: includes nested over 8 deep at "
                            "lib/${lib}.lua (a lib that includes itself?)")
      endif()
      set_property(GLOBAL APPEND PROPERTY embed_seen "${lib}")
      file(READ "${dir}/lib/${lib}.lua" libtext)
      math(EXPR next "${depth} + 1")
      embed_expand("${path}" "${dir}" "${libtext}" ${next} libtext)
      string(APPEND done "${libtext}")
    endif()
  endwhile()
  set(${out} "${done}${text}" PARENT_SCOPE)
endfunction()
# The Redis 7 function library of a script, into `out` ("" when the script
# cannot be one): `pre` is the script up to its last include line,
# expanded; `main` the rest. Redis runs the library's code once, when
# FUNCTION LOAD registers it, and then only the function on each FCALL,
# where EVALSHA runs the whole text on every call: defining the libs'
# functions is what a queue script spends most of a call on
# (tests/bench/floors.py, setup). So:
#   - `local function` lines and `local` constants of literals (numbers,
#     strings, true/false) stay at the top: made once, at load;
#   - every other top-level `local` in `pre` (what reads KEYS, ARGV,
#     redis.* or the clock, or holds state: a table, an unset local)
#     becomes a per-call setter, a closure that assigns that very local
#     again, run in text order at the start of each call (Redis hides
#     every global while the library loads, and state must not outlive a
#     call);
#   - `main` becomes the function's body, with KEYS and ARGV the
#     library's locals set from the call's arguments.
# A script whose `pre` holds anything else at the top level (a statement
# that is not a local or a function, a local that goes on over lines)
# gets no library: it runs as EVALSHA, as before.
function(embed_library path pre main out)
  set(${out} "" PARENT_SCOPE)
  # A literal local whose value is on the next line goes on one line.
  string(REGEX REPLACE "\n(local [A-Za-z_][A-Za-z0-9_, ]* =)\n +" "\n\\1 "
         pre "${pre}")
  string(REGEX MATCHALL "\n[^ \n-][^\n]*" tops "${pre}")
  foreach(line IN LISTS tops)
    if(NOT line MATCHES "^\n(local [A-Za-z_]|function |end$|end +--)")
      return()
    endif()
  endforeach()
  set(lit "('[^'\\\\]*'|-?[0-9]+|true|false)")
  string(REGEX MATCHALL "\nlocal [^\n]*" locals "${pre}")
  foreach(line IN LISTS locals)
    if(line MATCHES "^\nlocal function ")
      continue()
    endif()
    if(line MATCHES "^\nlocal [A-Za-z_][A-Za-z0-9_, ]* = ${lit}(, *${lit})*( +--[^\n]*)?$")
      continue()
    endif()
    if(line MATCHES "(,|\\(|\\{|=|\\.\\.| and| or)$")
      return()
    endif()
    if(line MATCHES "^\nlocal ([A-Za-z_]([A-Za-z0-9_, ]*[A-Za-z0-9_])?) = (.+)$")
      set(new "\nlocal ${CMAKE_MATCH_1}\n__pc[#__pc + 1] = function() ${CMAKE_MATCH_1} = ${CMAKE_MATCH_3}\nend")
    elseif(line MATCHES "^\nlocal ([A-Za-z_]([A-Za-z0-9_, ]*[A-Za-z0-9_])?)( +--[^\n]*)?$")
      set(new "\nlocal ${CMAKE_MATCH_1}\n__pc[#__pc + 1] = function() ${CMAKE_MATCH_1} = nil end")
    else()
      return()
    endif()
    string(REPLACE "${line}\n" "${new}\n" pre "${pre}")
  endforeach()
  set(lib "#!lua name=@NAME@\nlocal KEYS, ARGV\nlocal __pc = {}\n${pre}")
  string(APPEND lib "redis.register_function('@NAME@', function(keys, args)\n"
                    "KEYS, ARGV = keys, args\n"
                    "for i = 1, #__pc do __pc[i]() end\n${main}\nend)\n")
  string(SHA1 sha "${lib}")
  string(REPLACE "@NAME@" "fleet_${sha}" lib "${lib}")
  set(${out} "${lib}" PARENT_SCOPE)
endfunction()
set(body "/* Generated by cmake/embed_lua.cmake; do not edit. */\n")
string(APPEND body "#include \"scripts/scripts.h\"\n\n")
set(table "")
set(table_sharded "")
set(count 0)
set(wake_line "local wake_sharded\n")
set(primitives "")
set(fenced "")
set(nfn 0)
foreach(path IN LISTS SCRIPTS)
  get_filename_component(name "${path}" NAME_WE)
  get_filename_component(dir "${path}" DIRECTORY)
  file(READ "${path}" text)
  # The header: the comment lines the file opens with.
  string(REGEX MATCH "^(--[^\n]*\n)+" header "${text}")
  string(FIND "${header}" "-- ${name}.lua -- " at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "${path}: the header does not open with "
                        "\"-- ${name}.lua -- \"")
  endif()
  foreach(part "KEYS" "ARGV" "Returns:")
    string(FIND "${header}" "\n-- ${part}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${path}: the header has no \"-- ${part}\" line")
    endif()
  endforeach()
  string(TOUPPER "${name}" id)
  if(name MATCHES "^([a-z]+)_")
    string(TOUPPER "${CMAKE_MATCH_1}" prim)
  else()
    set(prim CORE)
  endif()
  if(NOT prim IN_LIST primitives)
    list(APPEND primitives ${prim})
    set(ops_${prim} "")
  endif()
  string(APPEND ops_${prim} " \\\n  XX(${id}, \"${name}\", NULL)")
  # A fenced op says so in its header (adapters/backend.h, "Fenced ops").
  if(header MATCHES "A[ \n-]+fenced[ \n-]+op")
    string(APPEND fenced " \\\n  XX(${id})")
  endif()
  # What follows the last include line: the body of its function
  # (embed_library); none without an include.
  set(main "")
  string(REGEX MATCHALL "--#include [a-z_]+\n" incs "${text}")
  if(incs)
    list(GET incs -1 last_inc)
    string(FIND "${text}" "${last_inc}" at REVERSE)
    string(LENGTH "${last_inc}" len)
    math(EXPR at "${at} + ${len}")
    string(SUBSTRING "${text}" ${at} -1 main)
  endif()
  set_property(GLOBAL PROPERTY embed_seen "")
  embed_expand("${path}" "${dir}" "${text}" 0 text)
  if(DEFINED EXPANDED)
    embed_write("${EXPANDED}/${name}.lua" "${text}")
  endif()
  string(FIND "${text}" "${wake_line}" wake_at)
  if(wake_at GREATER -1)
    string(REPLACE "${wake_line}" "local wake_sharded = false\n" plain "${text}")
    string(REPLACE "${wake_line}" "local wake_sharded = true\n" sharded "${text}")
  elseif(text MATCHES "publish_wake")
    message(FATAL_ERROR "${path}: publish_wake without lib/wake.lua's "
                        "\"local wake_sharded\" line")
  else()
    set(plain "${text}")
    set(sharded "")
  endif()
  set(variants plain)
  if(NOT sharded STREQUAL "")
    list(APPEND variants sharded)
  endif()
  foreach(v IN LISTS variants)
    set(vtext "${${v}}")
    set(var "lua_${name}")
    if(v STREQUAL "sharded")
      set(var "lua_${name}_sharded")
    endif()
    string(SHA1 sha_${v} "${vtext}")
    set(fn_${v} "NULL, 0, NULL")
    if(NOT main STREQUAL "")
      string(LENGTH "${vtext}" vlen)
      string(LENGTH "${main}" mlen)
      math(EXPR plen "${vlen} - ${mlen}")
      string(SUBSTRING "${vtext}" 0 ${plen} pre)
      embed_library("${path}" "${pre}" "${main}" lib)
      if(NOT lib STREQUAL "")
        string(REGEX MATCH "name=(fleet_[0-9a-f]+)" _ "${lib}")
        set(fname "${CMAKE_MATCH_1}")
        if(DEFINED EXPANDED AND v STREQUAL "plain")
          embed_write("${EXPANDED}/functions/${name}.lua" "${lib}")
        endif()
        string(REPLACE "\\" "\\\\" lib "${lib}")
        string(REPLACE "\"" "\\\"" lib "${lib}")
        string(REPLACE "\n" "\\n\"\n  \"" lib "${lib}")
        string(APPEND body "static const char ${var}_fn[] =\n  \"${lib}\";\n\n")
        set(fn_${v} "${var}_fn, sizeof(${var}_fn) - 1, \"${fname}\"")
        math(EXPR nfn "${nfn} + 1")
      endif()
    endif()
    string(REPLACE "\\" "\\\\" vtext "${vtext}")
    string(REPLACE "\"" "\\\"" vtext "${vtext}")
    string(REPLACE "\n" "\\n\"\n  \"" vtext "${vtext}")
    string(APPEND body "static const char ${var}[] =\n  \"${vtext}\";\n\n")
  endforeach()
  string(APPEND table "  {\"${name}\", lua_${name}, sizeof(lua_${name}) - 1, \"${sha_plain}\", ${fn_plain}},\n")
  if(sharded STREQUAL "")
    string(APPEND table_sharded "  {\"${name}\", lua_${name}, sizeof(lua_${name}) - 1, \"${sha_plain}\", ${fn_plain}},\n")
  else()
    string(APPEND table_sharded "  {\"${name}\", lua_${name}_sharded, sizeof(lua_${name}_sharded) - 1, \"${sha_sharded}\", ${fn_sharded}},\n")
  endif()
  math(EXPR count "${count} + 1")
endforeach()
string(APPEND body "const fleet__script_t fleet__scripts[] = {\n${table}};\n")
string(APPEND body "const fleet__script_t fleet__scripts_sharded[] = {\n${table_sharded}};\n")
string(APPEND body "const size_t fleet__nscripts = ${count};\n")
embed_write("${OUT}" "${body}")
if(DEFINED OPS)
  string(CONCAT ops "/* Generated by cmake/embed_lua.cmake from the scripts of "
          "adapters/scripts/lua;\n * do not edit. The ops that are Lua "
          "scripts, by primitive: XX(ID, name,\n * command) as in "
          "FLEET__OP_MAP (adapters/backend.h). */\n"
          "#ifndef FLEET_OPS_GENERATED_H\n#define FLEET_OPS_GENERATED_H\n")
  set(all "")
  foreach(prim IN LISTS primitives)
    string(APPEND ops "\n#define FLEET__OPS_${prim}(XX)${ops_${prim}}\n")
    string(APPEND all " \\\n  FLEET__OPS_${prim}(XX)")
  endforeach()
  string(APPEND ops "\n#define FLEET__OPS_FENCED(XX)${fenced}\n")
  string(APPEND ops "\n#define FLEET__OPS_SCRIPTS(XX)${all}\n"
                    "\n#endif /* FLEET_OPS_GENERATED_H */\n")
  embed_write("${OPS}" "${ops}")
endif()

/* ev_type_table.h: the one table of known event types (part of the
 * public API through eventlog.h).
 *
 * Implements spec/eventlog-format.md §2.1 (master table): every GHC id
 * 0-212 that GHC defines, the Eden ids (23/24, 60-69), Mercury (100-113)
 * and perf (140-142). Field names are the spec's payload column.
 *
 * EL_EV_TYPE_TABLE(T, V) is an X-macro list with one row per layout:
 *   T(id, NAME, fields)           the newest layout of type id;
 *   V(id, NAME, variant, fields)  an older layout (§1.8: STOP_THREAD 6,
 *                                 GC_STATS_GHC 50, NONMOVING_HEAP_CENSUS
 *                                 13; §2.9 ticky), which delivers the
 *                                 newest layout's fields, absent ones as
 *                                 0 / empty (el_ev_event_t.layout > 0).
 * fields is a sequence of F(name, wire) in payload order (NO_FIELDS when
 * there is none); wire names an el__ev_wire_t without its EL__W_ prefix
 * (U8, U16, U32, U64, TEXT, CSTR, ...: eventlog_internal.h). The users
 * expand it with their own T and V: eventlog.h the EL_EV_<NAME> ids,
 * ev_types.c the layouts and type infos. Rows are in id order. */
#ifndef EL_EV_TYPE_TABLE_H
#define EL_EV_TYPE_TABLE_H

/* clang-format off */
#define EL_EV_TYPE_TABLE(T, V)                                               \
  T(0, CREATE_THREAD, F(thread, U32))                                        \
  T(1, RUN_THREAD, F(thread, U32))                                           \
  T(2, STOP_THREAD, F(thread, U32) F(status, U16) F(info, U32))              \
  V(2, STOP_THREAD, 1, F(thread, U32) F(status, U16))                        \
  T(3, THREAD_RUNNABLE, F(thread, U32))                                      \
  T(4, MIGRATE_THREAD, F(thread, U32) F(new_cap, U16))                       \
  T(5, RUN_SPARK, F(thread, U32))                                            \
  T(6, STEAL_SPARK, F(thread, U32) F(victim_cap, U16))                       \
  T(7, SHUTDOWN, NO_FIELDS)                                                       \
  T(8, THREAD_WAKEUP, F(thread, U32) F(other_cap, U16))                      \
  T(9, GC_START, NO_FIELDS)                                                       \
  T(10, GC_END, NO_FIELDS)                                                        \
  T(11, REQUEST_SEQ_GC, NO_FIELDS)                                                \
  T(12, REQUEST_PAR_GC, NO_FIELDS)                                                \
  T(13, CREATE_SPARK, NO_FIELDS)                                                  \
  T(14, SPARK_TO_THREAD, NO_FIELDS)                                               \
  T(15, CREATE_SPARK_THREAD, F(spark_thread, U32))                           \
  T(16, LOG_MSG, F(text, TEXT))                                              \
  T(17, STARTUP, F(n_caps, U16))                                             \
  T(18, BLOCK_MARKER, F(block_size, U32) F(end_time, U64) F(cap, U16))       \
  T(19, USER_MSG, F(text, TEXT))                                             \
  T(20, GC_IDLE, NO_FIELDS)                                                       \
  T(21, GC_WORK, NO_FIELDS)                                                       \
  T(22, GC_DONE, NO_FIELDS)                                                       \
  T(23, VERSION, F(text, TEXT))                                              \
  T(24, PROGRAM_INVOCATION, F(text, TEXT))                                   \
  T(25, CAPSET_CREATE, F(capset, U32) F(capset_type, U16))                   \
  T(26, CAPSET_DELETE, F(capset, U32))                                       \
  T(27, CAPSET_ASSIGN_CAP, F(capset, U32) F(cap, U16))                       \
  T(28, CAPSET_REMOVE_CAP, F(capset, U32) F(cap, U16))                       \
  T(29, RTS_IDENTIFIER, F(capset, U32) F(text, TEXT))                        \
  T(30, PROGRAM_ARGS, F(capset, U32) F(args, STRLIST))                       \
  T(31, PROGRAM_ENV, F(capset, U32) F(env, STRLIST))                         \
  T(32, OSPROCESS_PID, F(capset, U32) F(pid, U32))                           \
  T(33, OSPROCESS_PPID, F(capset, U32) F(ppid, U32))                         \
  T(34, SPARK_COUNTERS, F(created, U64) F(dud, U64) F(overflowed, U64)       \
     F(converted, U64) F(gcd, U64) F(fizzled, U64) F(remaining, U64))        \
  T(35, SPARK_CREATE, NO_FIELDS)                                                  \
  T(36, SPARK_DUD, NO_FIELDS)                                                     \
  T(37, SPARK_OVERFLOW, NO_FIELDS)                                                \
  T(38, SPARK_RUN, NO_FIELDS)                                                     \
  T(39, SPARK_STEAL, F(victim_cap, U16))                                     \
  T(40, SPARK_FIZZLE, NO_FIELDS)                                                  \
  T(41, SPARK_GC, NO_FIELDS)                                                      \
  T(42, INTERN_STRING, F(string, TEXT_M4) F(id, U32))                        \
  T(43, WALL_CLOCK_TIME, F(capset, U32) F(unix_sec, U64) F(nsec, U32))       \
  T(44, THREAD_LABEL, F(thread, U32) F(label, TEXT))                         \
  T(45, CAP_CREATE, F(cap, U16))                                             \
  T(46, CAP_DELETE, F(cap, U16))                                             \
  T(47, CAP_DISABLE, F(cap, U16))                                            \
  T(48, CAP_ENABLE, F(cap, U16))                                             \
  T(49, HEAP_ALLOCATED, F(heap_capset, U32) F(alloc_bytes, U64))             \
  T(50, HEAP_SIZE, F(heap_capset, U32) F(size_bytes, U64))                   \
  T(51, HEAP_LIVE, F(heap_capset, U32) F(live_bytes, U64))                   \
  T(52, HEAP_INFO_GHC, F(heap_capset, U32) F(n_generations, U16)             \
     F(max_heap_size, U64) F(alloc_area_size, U64) F(mblock_size, U64)       \
     F(block_size, U64))                                                     \
  T(53, GC_STATS_GHC, F(heap_capset, U32) F(generation, U16) F(copied, U64)  \
     F(slop, U64) F(frag, U64) F(par_n_threads, U32) F(par_max_copied, U64)  \
     F(par_tot_copied, U64) F(par_balanced_copied, U64))                     \
  V(53, GC_STATS_GHC, 1, F(heap_capset, U32) F(generation, U16)              \
     F(copied, U64) F(slop, U64) F(frag, U64) F(par_n_threads, U32)          \
     F(par_max_copied, U64) F(par_tot_copied, U64))                          \
  T(54, GC_GLOBAL_SYNC, NO_FIELDS)                                                \
  T(55, TASK_CREATE, F(task_id, U64) F(cap, U16) F(kernel_tid, U64))         \
  T(56, TASK_MIGRATE, F(task_id, U64) F(cap, U16) F(new_cap, U16))           \
  T(57, TASK_DELETE, F(task_id, U64))                                        \
  T(58, USER_MARKER, F(marker, TEXT))                                        \
  T(59, HACK_BUG_T9003, NO_FIELDS)                                                \
  T(60, EDEN_START_RECEIVE, NO_FIELDS)                                            \
  T(61, EDEN_END_RECEIVE, NO_FIELDS)                                              \
  T(62, CREATE_PROCESS, F(process, U32))                                     \
  T(63, KILL_PROCESS, F(process, U32))                                       \
  T(64, ASSIGN_THREAD_TO_PROCESS, F(thread, U32) F(process, U32))            \
  T(65, CREATE_MACHINE, F(machine, U16) F(realtime, U64))                    \
  T(66, KILL_MACHINE, F(machine, U16))                                       \
  T(67, SEND_MESSAGE, F(tag, U8) F(sender_process, U32)                      \
     F(sender_thread, U32) F(receiver_machine, U16) F(receiver_process, U32) \
     F(receiver_inport, U32))                                                \
  T(68, RECEIVE_MESSAGE, F(tag, U8) F(receiver_process, U32)                 \
     F(receiver_inport, U32) F(sender_machine, U16) F(sender_process, U32)   \
     F(sender_thread, U32) F(message_size, U32))                             \
  T(69, SEND_RECEIVE_LOCAL_MESSAGE, F(tag, U8) F(sender_process, U32)        \
     F(sender_thread, U32) F(receiver_process, U32) F(receiver_inport, U32)) \
  T(90, MEM_RETURN, F(heap_capset, U32) F(current_mblocks, U32)              \
     F(needed_mblocks, U32) F(returned_mblocks, U32))                        \
  T(91, BLOCKS_SIZE, F(heap_capset, U32) F(size_bytes, U64))                 \
  T(100, MER_START_PAR_CONJUNCTION, F(dyn_id, U64) F(static_id, U32))        \
  T(101, MER_STOP_PAR_CONJUNCTION, F(dyn_id, U64))                           \
  T(102, MER_STOP_PAR_CONJUNCT, F(dyn_id, U64))                              \
  T(103, MER_CREATE_SPARK, F(dyn_id, U64) F(spark_id, U32))                  \
  T(104, MER_FUT_CREATE, F(future_id, U64) F(name_id, U32))                  \
  T(105, MER_FUT_WAIT_NOSUSPEND, F(future_id, U64))                          \
  T(106, MER_FUT_WAIT_SUSPENDED, F(future_id, U64))                          \
  T(107, MER_FUT_SIGNAL, F(future_id, U64))                                  \
  T(108, MER_LOOKING_FOR_GLOBAL_CONTEXT, NO_FIELDS)                               \
  T(109, MER_WORK_STEALING, NO_FIELDS)                                            \
  T(110, MER_RELEASE_CONTEXT, F(thread, U32))                                \
  T(111, MER_ENGINE_SLEEPING, NO_FIELDS)                                          \
  T(112, MER_LOOKING_FOR_LOCAL_SPARK, NO_FIELDS)                                  \
  T(113, MER_CALLING_MAIN, NO_FIELDS)                                             \
  T(140, PERF_NAME, F(perf_num, U32) F(name, TEXT))                          \
  T(141, PERF_COUNTER, F(perf_num, U32) F(kernel_tid, U64) F(period, U64))   \
  T(142, PERF_TRACEPOINT, F(perf_num, U32) F(kernel_tid, U64))               \
  T(160, HEAP_PROF_BEGIN, F(profile_id, U8) F(sampling_period_ns, U64)       \
     F(breakdown, U32) F(module, CSTR) F(closure_descr, CSTR)                \
     F(type_descr, CSTR) F(cost_centre, CSTR) F(ccs, CSTR) F(retainer, CSTR) \
     F(biography, CSTR))                                                     \
  T(161, HEAP_PROF_COST_CENTRE, F(cc_id, U32) F(label, CSTR) F(module, CSTR) \
     F(srcloc, CSTR) F(flags, U8))                                           \
  T(162, HEAP_PROF_SAMPLE_BEGIN, F(era, U64))                                \
  T(163, HEAP_PROF_SAMPLE_COST_CENTRE, F(profile_id, U8)                     \
     F(residency_bytes, U64) F(depth, DEPTH) F(stack, STACK))                \
  T(164, HEAP_PROF_SAMPLE_STRING, F(profile_id, U8) F(residency_bytes, U64)  \
     F(label, CSTR))                                                         \
  T(165, HEAP_PROF_SAMPLE_END, F(era, U64))                                  \
  T(166, HEAP_BIO_PROF_SAMPLE_BEGIN, F(era, U64) F(sample_time_ns, U64))     \
  T(167, PROF_SAMPLE_COST_CENTRE, F(capability, U32) F(tick, U64)            \
     F(depth, DEPTH) F(stack, STACK))                                        \
  T(168, PROF_BEGIN, F(tick_interval_ns, U64))                               \
  T(169, IPE, F(info_ptr, U64) F(table_name, CSTR) F(closure_desc, CSTR)     \
     F(ty_desc, CSTR) F(label, CSTR) F(module, CSTR) F(src_loc, CSTR))       \
  T(181, USER_BINARY_MSG, F(bytes, BYTES))                                   \
  T(200, CONC_MARK_BEGIN, NO_FIELDS)                                              \
  T(201, CONC_MARK_END, F(marked_objects, U32))                              \
  T(202, CONC_SYNC_BEGIN, NO_FIELDS)                                              \
  T(203, CONC_SYNC_END, NO_FIELDS)                                                \
  T(204, CONC_SWEEP_BEGIN, NO_FIELDS)                                             \
  T(205, CONC_SWEEP_END, NO_FIELDS)                                               \
  T(206, CONC_UPD_REM_SET_FLUSH, F(cap, U16))                                \
  T(207, NONMOVING_HEAP_CENSUS, F(blk_size, U16) F(active_segs, U32)         \
     F(filled_segs, U32) F(live_blocks, U32))                                \
  V(207, NONMOVING_HEAP_CENSUS, 1, F(blk_size, LOG2U8) F(active_segs, U32)   \
     F(filled_segs, U32) F(live_blocks, U32))                                \
  T(208, NONMOVING_PRUNED_SEGMENTS, F(pruned_segments, U32)                  \
     F(free_segments, U32))                                                  \
  T(210, TICKY_COUNTER_DEF, F(counter_id, U64) F(arity, U16)                 \
     F(arg_kinds, CSTR) F(name, CSTR) F(info_tbl, OPT_U64)                   \
     F(json, OPT_CSTR))                                                      \
  T(211, TICKY_COUNTER_SAMPLE, F(counter_id, U64) F(entry_count, U64)        \
     F(allocs, U64) F(allocd, U64))                                          \
  T(212, TICKY_COUNTER_BEGIN_SAMPLE, NO_FIELDS)
/* clang-format on */

#endif /* EL_EV_TYPE_TABLE_H */

/**
 * @file base.h
 * @brief Status codes, the caller-owned context, arenas and the trace sink.
 *
 * Every packwise function that can fail returns a ::pw_status. The detail of
 * the last failure (which tensor, which byte offset, which field, what fix) is
 * kept in the ::pw_context the call was given and read with
 * pw_context_message(). The library never prints, never aborts on input from
 * a caller or a file, and keeps no hidden global state: CPU features, the ISA
 * cap, the thread count, the allocator and the trace sink all live in the
 * context.
 */
#ifndef PACKWISE_BASE_H
#define PACKWISE_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks a public function (exported from the shared library). */
#if defined(_WIN32) && defined(PACKWISE_SHARED_BUILD)
#define PW_API __declspec(dllexport)
#elif defined(__GNUC__)
#define PW_API __attribute__((visibility("default")))
#else
#define PW_API
#endif

/**
 * X-macro list of status codes: (name, value, description), for bindings and
 * string tables; the enum ::pw_status below has the same values (checked at
 * compile time). Values are fixed forever; new codes are appended.
 */
#define PW_STATUS_LIST(X)                                                                   \
    X(PW_OK, 0, "success")                                                                  \
    X(PW_ERR_INVALID_ARGUMENT, 1, "invalid argument")                                       \
    X(PW_ERR_SHAPE, 2, "bad shape: not a whole number of blocks, out of range, or mismatched") \
    X(PW_ERR_LAYOUT, 3, "bytes are in a layout the operation does not read")                \
    X(PW_ERR_ORIENTATION, 4, "weight is labelled [in, out]; open with PW_ORIENT_OUT_IN")     \
    X(PW_ERR_UNSUPPORTED, 5, "unsupported format, type, or operation")                      \
    X(PW_ERR_OUT_OF_MEMORY, 6, "out of memory")                                             \
    X(PW_ERR_OVERFLOW, 7, "a size computation overflowed")                                  \
    X(PW_ERR_IO, 8, "input/output error")                                                   \
    X(PW_ERR_BAD_FILE, 9, "malformed file")                                                 \
    X(PW_ERR_TRUNCATED, 10, "file or buffer is shorter than its header says")               \
    X(PW_ERR_VERSION, 11, "unsupported file version or byte order")                         \
    X(PW_ERR_NOT_FOUND, 12, "not found")                                                    \
    X(PW_ERR_DUPLICATE, 13, "duplicate name or key")                                        \
    X(PW_ERR_CHECKSUM, 14, "checksum or content hash mismatch")                             \
    X(PW_ERR_FAMILY, 15, "packed buffer belongs to another kernel family or tile shape")

/** Status of every fallible packwise call. ::PW_OK is zero. (Same values as PW_STATUS_LIST.) */
typedef enum pw_status {
    PW_OK = 0,                   /**< success */
    PW_ERR_INVALID_ARGUMENT = 1, /**< a NULL pointer, a negative size, an option out of range */
    PW_ERR_SHAPE = 2,            /**< not a whole number of blocks, out of range, or mismatched sizes */
    PW_ERR_LAYOUT = 3,           /**< bytes in a layout the operation does not read */
    PW_ERR_ORIENTATION = 4,      /**< a weight labelled [in, out]; open with PW_ORIENT_OUT_IN */
    PW_ERR_UNSUPPORTED = 5,      /**< unsupported format, type, kernel or operation */
    PW_ERR_OUT_OF_MEMORY = 6,    /**< an allocation failed */
    PW_ERR_OVERFLOW = 7,         /**< a size computation overflowed */
    PW_ERR_IO = 8,               /**< open, read, write or map failed */
    PW_ERR_BAD_FILE = 9,         /**< a malformed file (GGUF, weights cache) */
    PW_ERR_TRUNCATED = 10,       /**< a file or buffer shorter than its header says */
    PW_ERR_VERSION = 11,         /**< an unsupported file version or byte order */
    PW_ERR_NOT_FOUND = 12,       /**< no tensor, key or kernel of that name */
    PW_ERR_DUPLICATE = 13,       /**< a duplicate name or key */
    PW_ERR_CHECKSUM = 14,        /**< a checksum or content hash does not match */
    PW_ERR_FAMILY = 15           /**< a packed buffer of another kernel family or tile shape */
} pw_status;

/** Fixed text for a status ("success", "malformed file", ...). Never NULL. */
PW_API const char *pw_status_str(pw_status status);
/** Short symbolic name of a status ("PW_ERR_BAD_FILE"). Never NULL. */
PW_API const char *pw_status_name(pw_status status);

/* ------------------------------------------------------------------------ */
/* Instruction-set levels and CPU features                                  */
/* ------------------------------------------------------------------------ */

/**
 * Instruction-set levels a context may be capped to. On x86-64 the levels are
 * SCALAR < AVX2 < AVXVNNI < AVX512; on Arm64 SCALAR < NEON < DOTPROD < I8MM < SME.
 * The enum's values are not that order (AVXVNNI came later); the library ranks
 * them itself. A cap never raises what the CPU has; it only hides features so
 * that lower paths can be tested on one machine (a level the CPU lacks runs at
 * the highest level below it that the CPU has: pw_context_isa() says which).
 */
typedef enum pw_isa {
    PW_ISA_NATIVE = 0, /**< no cap: everything the CPU has */
    PW_ISA_SCALAR = 1, /**< portable C only */
    PW_ISA_AVX2 = 2,   /**< x86: AVX2 + FMA + F16C */
    PW_ISA_AVX512 = 3, /**< x86: AVX-512 F/BW/VL (+ VNNI where present) */
    PW_ISA_NEON = 4,   /**< Arm64: Advanced SIMD */
    PW_ISA_DOTPROD = 5,/**< Arm64: + SDOT/UDOT (asimddp) */
    PW_ISA_I8MM = 6,   /**< Arm64: + SMMLA/USMMLA (i8mm) */
    PW_ISA_SME = 7,    /**< Arm64: + SME (streaming mode, ZA outer products; version 1) */
    PW_ISA_AVXVNNI = 8 /**< x86: AVX2 + FMA + F16C + AVX-VNNI (VEX vpdpbusd, Alder Lake on) */
} pw_isa;

/** CPU feature bits, as reported by pw_context_cpu_features(). */
enum pw_cpu_feature {
    PW_CPU_AVX2 = 1u << 0,
    PW_CPU_FMA = 1u << 1,
    PW_CPU_F16C = 1u << 2,
    PW_CPU_AVX512F = 1u << 3,
    PW_CPU_AVX512BW = 1u << 4,
    PW_CPU_AVX512VL = 1u << 5,
    PW_CPU_AVX512VNNI = 1u << 6,
    PW_CPU_AVXVNNI = 1u << 7,
    PW_CPU_NEON = 1u << 16,
    PW_CPU_DOTPROD = 1u << 17,
    PW_CPU_I8MM = 1u << 18,
    PW_CPU_SME = 1u << 19 /**< set only when the streaming vector length is known too
                               (pw_context_sme_vector_bytes()) */
};

/** Name of an ISA level ("scalar", "avx2", ...). Never NULL. */
PW_API const char *pw_isa_name(pw_isa isa);
/**
 * Parse an ISA name as accepted by PACKWISE_ISA: "native", "scalar", "avx2",
 * "avxvnni", "avx512", "neon", "dotprod", "i8mm", "sme". Returns ::PW_ERR_INVALID_ARGUMENT for
 * anything else.
 */
PW_API pw_status pw_isa_from_name(const char *name, pw_isa *out);

/* ------------------------------------------------------------------------ */
/* Trace events                                                             */
/* ------------------------------------------------------------------------ */

/** What a trace event reports. */
typedef enum pw_trace_kind {
    PW_TRACE_KERNEL = 0,   /**< a kernel was selected: kernel, key */
    PW_TRACE_ADAPTER = 1,  /**< a layout conversion copied bytes: tensor, bytes, from, to */
    PW_TRACE_FALLBACK = 2, /**< the reference kernel was used: kernel, reason */
    PW_TRACE_CACHE = 3,    /**< a weights-cache decision: tensor, reason */
    PW_TRACE_WARNING = 4   /**< it works, but not as the caller may think (a dead end that
                                only the reference kernel reads): tensor, reason */
} pw_trace_kind;

/**
 * One trace event. Every string is owned by the library and valid only for
 * the duration of the callback; fields that do not apply are NULL or 0.
 */
typedef struct pw_trace_event {
    pw_trace_kind kind; /**< what happened; says which fields apply */
    const char *tensor; /**< tensor name, when known */
    const char *kernel; /**< kernel name (KERNEL, FALLBACK) */
    const char *key;    /**< kernel key (KERNEL) */
    uint64_t bytes;     /**< bytes copied (ADAPTER) */
    const char *from;   /**< source layout name (ADAPTER) */
    const char *to;     /**< target layout name (ADAPTER) */
    const char *reason; /**< why (FALLBACK, CACHE) */
} pw_trace_event;

/** Trace sink: called synchronously on the calling thread. */
typedef void (*pw_trace_fn)(void *user, const pw_trace_event *event);

/**
 * Format an event as the command-line contract's one-line form, for example
 * `trace adapter tensor=w bytes=9437184 from=row_major to=input_block_major`
 * (no trailing newline). Writes at most @p capacity bytes including the NUL
 * and returns the length the full line needs, like snprintf.
 */
PW_API size_t pw_trace_format(const pw_trace_event *event, char *buffer, size_t capacity);

/* ------------------------------------------------------------------------ */
/* Context                                                                  */
/* ------------------------------------------------------------------------ */

/**
 * Allocator hooks. alloc returns memory aligned to at least @p alignment
 * (a power of two, at most 4096) or NULL; free accepts NULL.
 */
typedef struct pw_allocator {
    void *(*alloc)(void *user, size_t bytes, size_t alignment); /**< allocate, or NULL */
    void (*free)(void *user, void *pointer);                    /**< release (NULL allowed) */
    void *user;                                                 /**< passed to both */
} pw_allocator;

/**
 * One unit of parallel work. A parallel-for hook (::pw_parallel_for_fn), so a
 * host engine can run packwise's work on its own threads, must call
 * task(task_context, i) exactly once for every i in [0, range) and return only
 * when all calls have returned; calls may run concurrently. NULL means
 * packwise's own pool.
 */
typedef void (*pw_parallel_task)(void *task_context, size_t index);
/** A host engine's parallel-for: see ::pw_parallel_task for the contract. */
typedef void (*pw_parallel_for_fn)(void *user, pw_parallel_task task, void *task_context,
                                   size_t range);

/**
 * The most threads a context may be given (::pw_context_options.threads,
 * pw_context_set_threads(), and the command's `--threads`); a larger count is
 * refused with ::PW_ERR_INVALID_ARGUMENT and a message naming this cap. A count
 * of 0 (all online cores) is clamped to it.
 *
 * Why 1024: the largest single machines sold today run 512 hardware threads
 * (two 128-core sockets with SMT), so the cap is twice what any real machine
 * can use, while a mistaken count (a byte count, a negative number cast to
 * unsigned) cannot ask for millions of threads: each one reserves a stack
 * (8 MiB of address space by default), and packwise's work splits give every
 * thread several tasks, so more threads than cores only slow a product down.
 */
#define PW_MAX_THREADS 1024

/**
 * What a prepared weight may hold in memory (weight.h describes each policy):
 * a context's default, which each weight may override.
 */
typedef enum pw_memory_policy {
    PW_MEMORY_DEFAULT = 0,  /**< in weight options: the context's policy; in a context: COMPACT */
    PW_MEMORY_COMPACT = 1,  /**< one form for every batch size, at most the source's bytes + 3% */
    PW_MEMORY_FASTEST = 2,  /**< the fastest kernel per batch class, whatever forms it reads */
    PW_MEMORY_IN_PLACE = 3  /**< no copy: only kernels that read the source as it is */
} pw_memory_policy;

/**
 * Options for pw_context_create(). Initialise with pw_context_options_init(),
 * then set what you need; new fields are only ever appended, and
 * @c struct_size tells the library which ones the caller knows.
 */
typedef struct pw_context_options {
    size_t struct_size;   /**< sizeof(pw_context_options), set by init */
    pw_isa max_isa;       /**< cap; PW_ISA_NATIVE = none. PACKWISE_ISA may lower it further */
    int ignore_env;       /**< nonzero: do not read PACKWISE_ISA, nor check PACKWISE_TUNE */
    int threads;          /**< worker threads counting the caller; 0 = the online cores;
                               at most ::PW_MAX_THREADS */
    int prepack_weights;  /**< nonzero: dispatch may relayout weights (an adapter event each time) */
    pw_trace_fn trace;    /**< trace sink; NULL = events are dropped */
    void *trace_user;     /**< passed to @ref trace */
    pw_allocator allocator;         /**< all library allocations; zero = the default:
                                         posix_memalign/free, with buffers of 4 MiB or
                                         more (packed weights) 2 MiB aligned and
                                         madvise(MADV_HUGEPAGE) asked for, so streaming
                                         them costs few TLB misses */
    pw_parallel_for_fn parallel_for;/**< NULL = packwise's own thread pool */
    void *parallel_for_user;        /**< passed to @c parallel_for */
    pw_memory_policy memory_policy; /**< what prepared weights may hold (weight.h);
                                         DEFAULT = PW_MEMORY_COMPACT */
    int spin_wait;                  /**< nonzero: after each call the pool's idle workers
                                         spin-wait for the next one up to 10 ms
                                         before they sleep, so a decode step's
                                         products, and the gaps between tokens,
                                         find them awake; for engines that own
                                         their cores (it burns them while it
                                         waits). 0 (default): after a call that
                                         came within 50 us of the previous one
                                         they poll for 50 us (an engine's
                                         back-to-back products find them awake)
                                         and then sleep; after any other call
                                         they sleep at once */
} pw_context_options;

/**
 * Opaque context owned by the caller.
 *
 * Thread safety: a context is used by one thread at a time (its message, its
 * thread pool and its settings are not locked); give each serving thread its own
 * context. pw_context_create() and pw_context_destroy() may be called from any
 * thread, concurrently with each other and with calls on other contexts: they
 * share no state (the creation message is kept per thread). An object whose
 * header says it may be shared (a prepared weight, weight.h; a weights cache,
 * cache.h) may be used by several contexts at once; everything else belongs to one
 * context at a time.
 *
 * Threads: a context with more than one thread and no parallel-for hook owns
 * threads - 1 worker threads, created by pw_context_create() or
 * pw_context_set_threads() and joined by pw_context_destroy() (or the next
 * pw_context_set_threads()) before it returns; no thread outlives its context,
 * and idle workers sleep once they have polled briefly for the next call
 * (::pw_context_options.spin_wait). Workers run only inside a call made
 * with the context. Do not destroy a context from inside one of its own tasks
 * or trace callbacks, and do not use a context in the child of a fork(): its
 * workers exist only in the parent.
 */
typedef struct pw_context pw_context;

/** Fill @p options with defaults (no cap, all cores, no trace, malloc). */
PW_API void pw_context_options_init(pw_context_options *options);

/**
 * Create a context: detects CPU features once and applies the ISA cap from
 * @p options and from the environment variable PACKWISE_ISA (the lower of the
 * two wins). @p options may be NULL for defaults. The environment variable
 * PACKWISE_TUNE (x86-64: auto, generic, intel, zen4 or zen5; elsewhere auto or
 * generic) makes the kernels take the measured settings of another CPU (stream
 * counts, prefetch hints and distances, and the instruction choices measured faster
 * there, such as a GEMV's vector width or how it broadcasts activations; never another
 * ISA level than PACKWISE_ISA's, and results stay within every kernel's tolerance):
 * auto (or unset) those of the CPU that runs,
 * generic none of the vendor ones. It is process-wide, read once when the process's
 * first context detects the CPU, whatever that context's @c ignore_env; each context
 * created without @c ignore_env checks its value. An unknown PACKWISE_ISA or
 * PACKWISE_TUNE value and a thread count above ::PW_MAX_THREADS are refused with
 * ::PW_ERR_INVALID_ARGUMENT; worker threads that cannot all be created (a limit
 * on processes or address space) give ::PW_ERR_OUT_OF_MEMORY, after joining the
 * ones that were. On failure *out is NULL and the message is available from
 * pw_last_create_message().
 */
PW_API pw_status pw_context_create(const pw_context_options *options, pw_context **out);

/** Destroy a context. Accepts NULL. */
PW_API void pw_context_destroy(pw_context *ctx);

/**
 * Detail of the last failed call made with @p ctx ("" when there was none).
 * Valid until the next call with @p ctx.
 */
PW_API const char *pw_context_message(const pw_context *ctx);

/** Forget the last message. */
PW_API void pw_context_clear_message(pw_context *ctx);

/** Message of the last failed pw_context_create() on this thread. */
PW_API const char *pw_last_create_message(void);

/** Features the CPU has (bitwise OR of ::pw_cpu_feature), before any cap. */
PW_API uint32_t pw_context_cpu_features(const pw_context *ctx);

/** Features kernels may use: the CPU's features restricted by the cap. */
PW_API uint32_t pw_context_usable_features(const pw_context *ctx);

/**
 * The streaming vector length (SVL), in bytes, when SME is usable in this context
 * (16 to 256: 128 to 2048 bits); 0 otherwise. SME kernels' tiles follow it, so a
 * packed form made for one length is refused at another.
 */
PW_API int32_t pw_context_sme_vector_bytes(const pw_context *ctx);

/** The highest ISA level usable in this context (after the cap). */
PW_API pw_isa pw_context_isa(const pw_context *ctx);

/**
 * Lower (or lift, up to what the CPU has) the ISA cap. Returns
 * ::PW_ERR_INVALID_ARGUMENT for a level of the other architecture.
 */
PW_API pw_status pw_context_set_isa(pw_context *ctx, pw_isa max_isa);

/** Set or clear the trace sink. */
PW_API void pw_context_set_trace(pw_context *ctx, pw_trace_fn trace, void *user);

/** Allow (nonzero) or forbid dispatch to relayout weights (::pw_context_options.prepack_weights). */
PW_API void pw_context_set_prepack_weights(pw_context *ctx, int enabled);
/** Whether dispatch may relayout weights. */
PW_API int pw_context_prepack_weights(const pw_context *ctx);

/** Set the memory policy of weights created from now on (DEFAULT = COMPACT). Returns
 *  ::PW_ERR_INVALID_ARGUMENT for a value that is not a ::pw_memory_policy. */
PW_API pw_status pw_context_set_memory_policy(pw_context *ctx, pw_memory_policy policy);
/** The context's memory policy (never DEFAULT). */
PW_API pw_memory_policy pw_context_memory_policy(const pw_context *ctx);

/**
 * The default allocator's hooks (posix_memalign and free; buffers of 4 MiB or
 * more 2 MiB aligned with transparent huge pages asked for), for an
 * allocator hook that wraps it, e.g. to count or track what the library holds.
 */
PW_API pw_allocator pw_allocator_default(void);

/**
 * Allocate through the context's allocator, as the library allocates its own
 * buffers (with the default allocator: large ones on huge pages). Free with
 * pw_context_free(). NULL when memory is exhausted.
 */
PW_API void *pw_context_alloc(pw_context *ctx, size_t bytes, size_t alignment);
/** Release memory from pw_context_alloc(). Accepts NULL. */
PW_API void pw_context_free(pw_context *ctx, void *pointer);

/**
 * Run task(task_context, i) for every i in [0, range) on the context's threads
 * (its own pool, or the host's parallel-for), returning when all have
 * returned. Calls may run concurrently.
 */
PW_API void pw_context_parallel_for(pw_context *ctx, pw_parallel_task task, void *task_context,
                                    size_t range);

/** Number of worker threads (including the caller). */
PW_API int pw_context_threads(const pw_context *ctx);

/** Turn ::pw_context_options.spin_wait on (nonzero) or off for the following calls. */
PW_API pw_status pw_context_set_spin_wait(pw_context *ctx, int spin_wait);

/**
 * The threads the following calls run on, beside the context's own, until set
 * again (no thread is created or joined):
 * - @p parallel_for NULL: at most @p threads of the context's threads (0 = all of
 *   them; a count above the context's means all of them); 1 runs every call on the
 *   calling thread alone, with no pool wake-up;
 * - @p parallel_for set: that host parallel-for (for example a wrapper of the
 *   engine's own `pthreadpool_parallelize_1d`; see ::pw_parallel_task for its
 *   contract), which has @p threads threads (0 = the context's count): the work is
 *   split for that many.
 * pw_context_set_call_threads(ctx, 0, NULL, NULL) returns to the context's own.
 * Results do not depend on the threads. ::PW_ERR_INVALID_ARGUMENT for a count
 * below 0 or above ::PW_MAX_THREADS.
 */
PW_API pw_status pw_context_set_call_threads(pw_context *ctx, int threads,
                                             pw_parallel_for_fn parallel_for,
                                             void *parallel_for_user);

/**
 * Change the number of threads (0 = online cores, at most ::PW_MAX_THREADS).
 * Creates the new pool before releasing the old one; on failure
 * (::PW_ERR_INVALID_ARGUMENT above the cap, ::PW_ERR_OUT_OF_MEMORY when the
 * threads cannot be created) the context keeps its previous threads.
 */
PW_API pw_status pw_context_set_threads(pw_context *ctx, int threads);

/* ------------------------------------------------------------------------ */
/* Arena                                                                    */
/* ------------------------------------------------------------------------ */

/**
 * An arena: 64-byte aligned allocations released together by
 * pw_arena_destroy() or pw_arena_reset(). Memory comes from the context's
 * allocator. Relayouts (pw_view_prepack) allocate their copies here, so a
 * prepacked view lives as long as its arena.
 */
typedef struct pw_arena pw_arena;

/** Create an empty arena bound to @p ctx's allocator. */
PW_API pw_status pw_arena_create(pw_context *ctx, pw_arena **out);
/** Release every allocation and the arena. Accepts NULL. */
PW_API void pw_arena_destroy(pw_arena *arena);
/** Release every allocation; the arena stays usable. */
PW_API void pw_arena_reset(pw_arena *arena);
/**
 * Allocate @p bytes (may be 0) aligned to 64 bytes. Returns NULL when memory
 * is exhausted or @p bytes overflows; the context message then says so.
 */
PW_API void *pw_arena_alloc(pw_arena *arena, size_t bytes);
/** Bytes handed out since creation or the last reset. */
PW_API uint64_t pw_arena_used(const pw_arena *arena);

#ifdef __cplusplus
}
#endif
#endif

/*
 * CPU feature detection, done once per context. x86-64 uses CPUID and XGETBV
 * (the OS must have enabled the AVX and AVX-512 register state, not only the
 * CPU report the instructions); Arm64 Linux uses the hwcaps the kernel gives.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int pw__tune_from_name(const char *name) {
    if (name == NULL || name[0] == '\0' || strcmp(name, "auto") == 0) return PW__TUNE_AUTO;
    if (strcmp(name, "generic") == 0) return PW__TUNE_GENERIC;
#if defined(__x86_64__) || defined(_M_X64)
    if (strcmp(name, "intel") == 0) return PW__TUNE_INTEL;
    if (strcmp(name, "zen4") == 0) return PW__TUNE_ZEN4;
    if (strcmp(name, "zen5") == 0) return PW__TUNE_ZEN5;
#endif
    return -1;
}

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#include "x86_tune.h"

static uint64_t xgetbv0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* The kernels' per-CPU settings (base/x86_tune.h says what each one selects). */
int pw__x86_intel;
int pw__x86_prefetch_l2;
int pw__x86_hw_streams;
int pw__x86_gemv_ymm;
int pw__x86_zen5;

/* CPUID facts beside the kernel features, read once per process (x86_traits), where
 * PACKWISE_TUNE may name another CPU's settings (pw__tune_from_name): the
 * vendor (pw__x86_intel), with the family the prefetch hint (pw__x86_prefetch_l2), the
 * hardware streams (pw__x86_hw_streams) and the Q8_0 GEMV's width (pw__x86_gemv_ymm), the
 * Zen 5 settings of some GEMVs (pw__x86_zen5), and
 * CLFLUSHOPT (leaf 7, EBX bit 23; op/evict.c). Two first callers racing store the same
 * values. */
static int x86_traits_known, x86_clflushopt;

static void x86_traits(void) {
    if (__atomic_load_n(&x86_traits_known, __ATOMIC_ACQUIRE)) return;
    unsigned a, b, c, d;
    int intel = 0, amd = 0, family = 0, avx512f = 0, flushopt = 0;
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        const unsigned max_leaf = a;
        char vendor[13];
        memcpy(vendor, &b, 4);
        memcpy(vendor + 4, &d, 4);
        memcpy(vendor + 8, &c, 4);
        vendor[12] = '\0';
        intel = strcmp(vendor, "GenuineIntel") == 0;
        amd = strcmp(vendor, "AuthenticAMD") == 0;
        if (max_leaf >= 1) {
            __cpuid(1, a, b, c, d);
            family = (int)((a >> 8) & 0xF); /* base family, + extended family when 0xF */
            if (family == 0xF) family += (int)((a >> 20) & 0xFF);
        }
        if (max_leaf >= 7) {
            __cpuid_count(7, 0, a, b, c, d);
            flushopt = (b >> 23) & 1;
            avx512f = (b >> 16) & 1; /* family 19h with AVX-512: Zen 4, not Zen 3 */
        }
    }
    int zen4 = amd && family == 0x19 && avx512f, zen5 = amd && family == 0x1A && avx512f;
    /* PACKWISE_TUNE names a vendor's settings in place of the CPU's own (any of them is
     * safe on any x86-64 CPU: they choose among paths of the same instructions) */
    const int tune = pw__tune_from_name(getenv("PACKWISE_TUNE"));
    if (tune > PW__TUNE_AUTO) {
        intel = tune == PW__TUNE_INTEL;
        zen4 = tune == PW__TUNE_ZEN4;
        zen5 = tune == PW__TUNE_ZEN5;
    }
    __atomic_store_n(&pw__x86_intel, intel, __ATOMIC_RELAXED);
    __atomic_store_n(&pw__x86_prefetch_l2, intel || zen4, __ATOMIC_RELAXED);
    __atomic_store_n(&pw__x86_hw_streams, zen4, __ATOMIC_RELAXED);
    __atomic_store_n(&pw__x86_gemv_ymm, zen4, __ATOMIC_RELAXED);
    __atomic_store_n(&pw__x86_zen5, zen5, __ATOMIC_RELAXED);
    __atomic_store_n(&x86_clflushopt, flushopt, __ATOMIC_RELAXED);
    __atomic_store_n(&x86_traits_known, 1, __ATOMIC_RELEASE);
}

int pw__x86_has_clflushopt(void) {
    x86_traits();
    return __atomic_load_n(&x86_clflushopt, __ATOMIC_RELAXED);
}

uint32_t pw__detect_cpu_features(void) {
    unsigned a, b, c, d;
    uint32_t f = 0;
    x86_traits();
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    const int osxsave = (c >> 27) & 1;
    const int has_fma = (c >> 12) & 1;
    const int has_f16c = (c >> 29) & 1;
    if (!osxsave) return 0;
    const uint64_t xcr0 = xgetbv0();
    const int os_avx = (xcr0 & 0x6) == 0x6;          /* XMM and YMM state */
    const int os_avx512 = (xcr0 & 0xe6) == 0xe6;     /* + opmask, ZMM_Hi256, Hi16_ZMM */
    if (!os_avx) return 0;
    if (has_fma) f |= PW_CPU_FMA;
    if (has_f16c) f |= PW_CPU_F16C;
    if (__get_cpuid_max(0, NULL) < 7) return f;
    __cpuid_count(7, 0, a, b, c, d);
    if ((b >> 5) & 1) f |= PW_CPU_AVX2;
    if (os_avx512) {
        if ((b >> 16) & 1) f |= PW_CPU_AVX512F;
        if ((b >> 30) & 1) f |= PW_CPU_AVX512BW;
        if ((b >> 31) & 1) f |= PW_CPU_AVX512VL;
        if ((c >> 11) & 1) f |= PW_CPU_AVX512VNNI;
    }
    __cpuid_count(7, 1, a, b, c, d);
    if ((a >> 4) & 1) f |= PW_CPU_AVXVNNI;
    return f;
}

#elif defined(__aarch64__)
#include <sys/auxv.h>
#include <sys/prctl.h>

#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#ifndef HWCAP2_I8MM
#define HWCAP2_I8MM (1 << 13)
#endif
#ifndef HWCAP2_SME
#define HWCAP2_SME (1 << 23)
#endif
#ifndef PR_SME_GET_VL
#define PR_SME_GET_VL 64
#endif
#define PW__SME_VL_LEN_MASK 0xffff /* PR_SME_VL_LEN_MASK: the rest are flags */

/* Linux gives the length the thread's streaming mode will have (threads inherit it);
 * SME fixes it to a power of two from 128 to 2048 bits. */
int32_t pw__detect_sme_bytes(void) {
    if (!(getauxval(AT_HWCAP2) & HWCAP2_SME)) return 0;
    const int r = prctl(PR_SME_GET_VL, 0, 0, 0, 0);
    if (r < 0) return 0;
    const int32_t bytes = (int32_t)(r & PW__SME_VL_LEN_MASK);
    return bytes >= 16 && bytes <= 256 && (bytes & (bytes - 1)) == 0 ? bytes : 0;
}

uint32_t pw__detect_cpu_features(void) {
    unsigned long hw = getauxval(AT_HWCAP);
    unsigned long hw2 = getauxval(AT_HWCAP2);
    uint32_t f = 0;
    if (hw & HWCAP_ASIMD) f |= PW_CPU_NEON;
    if (hw & HWCAP_ASIMDDP) f |= PW_CPU_DOTPROD;
    if (hw2 & HWCAP2_I8MM) f |= PW_CPU_I8MM;
    /* SME only with a known streaming vector length: every SME kernel's tile follows it. */
    if (pw__detect_sme_bytes() != 0) f |= PW_CPU_SME;
    return f;
}

#else
uint32_t pw__detect_cpu_features(void) { return 0; }
#endif

#if !defined(__aarch64__)
int32_t pw__detect_sme_bytes(void) { return 0; }
#endif

#define PW__X86_ALL                                                                         \
    (PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C | PW_CPU_AVX512F | PW_CPU_AVX512BW |            \
     PW_CPU_AVX512VL | PW_CPU_AVX512VNNI | PW_CPU_AVXVNNI)
#define PW__ARM_ALL (PW_CPU_NEON | PW_CPU_DOTPROD | PW_CPU_I8MM | PW_CPU_SME)

uint32_t pw__features_for_isa(pw_isa isa) {
    switch (isa) {
    case PW_ISA_NATIVE: return PW__X86_ALL | PW__ARM_ALL;
    case PW_ISA_SCALAR: return 0;
    /* AVX-VNNI (VEX) stays out of the AVX2 level so that "avx2" means plain AVX2 everywhere;
     * the avxvnni level is AVX2 plus it, as on Alder Lake and later client chips. */
    case PW_ISA_AVX2: return PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C;
    case PW_ISA_AVXVNNI: return PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C | PW_CPU_AVXVNNI;
    case PW_ISA_AVX512: return PW__X86_ALL;
    case PW_ISA_NEON: return PW_CPU_NEON;
    case PW_ISA_DOTPROD: return PW_CPU_NEON | PW_CPU_DOTPROD;
    case PW_ISA_I8MM: return PW_CPU_NEON | PW_CPU_DOTPROD | PW_CPU_I8MM;
    case PW_ISA_SME: return PW__ARM_ALL;
    }
    return 0;
}

pw_isa pw__isa_of_features(uint32_t f) {
    const uint32_t avx512 = PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL;
    const uint32_t avx2 = PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C;
    if ((f & (avx512 | avx2)) == (avx512 | avx2)) return PW_ISA_AVX512;
    if ((f & (avx2 | PW_CPU_AVXVNNI)) == (avx2 | PW_CPU_AVXVNNI)) return PW_ISA_AVXVNNI;
    if ((f & avx2) == avx2) return PW_ISA_AVX2;
    if ((f & PW__ARM_ALL) == PW__ARM_ALL) return PW_ISA_SME;
    if ((f & (PW_CPU_NEON | PW_CPU_DOTPROD | PW_CPU_I8MM)) == (PW_CPU_NEON | PW_CPU_DOTPROD | PW_CPU_I8MM))
        return PW_ISA_I8MM;
    if ((f & (PW_CPU_NEON | PW_CPU_DOTPROD)) == (PW_CPU_NEON | PW_CPU_DOTPROD)) return PW_ISA_DOTPROD;
    if (f & PW_CPU_NEON) return PW_ISA_NEON;
    return PW_ISA_SCALAR;
}

/* Indexed by pw_isa. */
static const char *const isa_names[] = {"native", "scalar",  "avx2", "avx512", "neon",
                                        "dotprod", "i8mm", "sme",  "avxvnni"};

/* A level's place in its architecture's order (scalar lowest); native above all. */
int pw__isa_rank(pw_isa isa) {
    switch (isa) {
    case PW_ISA_NATIVE: return 100;
    case PW_ISA_SCALAR: return 0;
    case PW_ISA_AVX2: return 1;
    case PW_ISA_AVXVNNI: return 2;
    case PW_ISA_AVX512: return 3;
    case PW_ISA_NEON: return 1;
    case PW_ISA_DOTPROD: return 2;
    case PW_ISA_I8MM: return 3;
    case PW_ISA_SME: return 4;
    }
    return 0;
}

const char *pw_isa_name(pw_isa isa) {
    if ((unsigned)isa < sizeof isa_names / sizeof isa_names[0]) return isa_names[isa];
    return "unknown";
}

pw_status pw_isa_from_name(const char *name, pw_isa *out) {
    if (name == NULL || out == NULL) return PW_ERR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < sizeof isa_names / sizeof isa_names[0]; ++i) {
        if (strcasecmp(name, isa_names[i]) == 0) {
            *out = (pw_isa)i;
            return PW_OK;
        }
    }
    return PW_ERR_INVALID_ARGUMENT;
}

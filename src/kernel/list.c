/* The kernel table, expanded from kernel_list.h. */
#include "kernel/kernel.h"

#define PW_KERNEL(id) extern const pw__kernel pw__k_##id;
#include "kernel/kernel_list.h"
#undef PW_KERNEL

static const pw__kernel *const kernels[] = {
#define PW_KERNEL(id) &pw__k_##id,
#include "kernel/kernel_list.h"
#undef PW_KERNEL
};

size_t pw__kernel_list_count(void) { return sizeof kernels / sizeof kernels[0]; }

const pw__kernel *pw__kernel_list_get(size_t i) {
    return i < pw__kernel_list_count() ? kernels[i] : NULL;
}

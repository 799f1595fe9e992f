/**
 * @file packwise.h
 * @brief packwise: block-quantized weights carried from the file to the
 *        matmul kernel, correctly and fast.
 *
 * Include this one header. The layout rules every function depends on are
 * stated once, in @ref layout_rules (view.h).
 */
#ifndef PACKWISE_H
#define PACKWISE_H

/** Major version: changes that break the API or a byte format's meaning (rule 5). */
#define PW_VERSION_MAJOR 0
/** Minor version: additions (while the major version is 0, also API changes). */
#define PW_VERSION_MINOR 2
/** Patch version: fixes that change no API and no byte format. */
#define PW_VERSION_PATCH 0
/** Version as a string, e.g. "0.2.0". */
#define PW_VERSION "0.2.0"

#include "packwise/base.h"
#include "packwise/format.h"
#include "packwise/view.h"
#include "packwise/gguf.h"
#include "packwise/matmul.h"
#include "packwise/weight.h"
#include "packwise/qb4w.h"
#include "packwise/qc4w.h"
#include "packwise/fixtures.h"
#include "packwise/cache.h"
#include "packwise/file.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Version of the library actually linked (may differ from PW_VERSION). */
PW_API const char *pw_version(void);

#ifdef __cplusplus
}
#endif
#endif

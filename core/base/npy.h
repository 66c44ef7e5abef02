/*
 * core/base/npy.h - reading and writing NumPy .npy files (internal).
 *
 * Formats 1.0, 2.0 and 3.0 are read; 1.0 (or 2.0 when the header needs
 * it) is written.  Only little-endian ('<', '|' or '=') C-order data of
 * these element types: f4 float32, f2 float16, i1 int8, i4 int32,
 * b1 bool, i8 int64, u1 uint8.  Used by the `mica` command, by the
 * manifest loader (weights given as `npy:`) and by the tests.
 */
#ifndef MICA_NPY_H
#define MICA_NPY_H

#include <stddef.h>
#include <stdio.h>

#include "mica/types.h"

/* An array read from a file.  `data` is malloc'd, row-major. */
typedef struct mica__npy {
    mica_dtype_t dtype;
    mica_dims_t dims;
    void *data;
    size_t bytes; /* volume * element size */
} mica__npy_t;

/*
 * Read the .npy file at `path` into `out`.  On failure returns a status
 * (MICA_ERR_NOT_FOUND or MICA_ERR_IO for the file, MICA_ERR_INVALID or
 * MICA_ERR_UNSUPPORTED for the contents) and writes one line into err,
 * naming the file.
 */
mica_status_t mica__npy_read(const char *path, mica__npy_t *out, char *err,
                             size_t errlen);

/* The same from open descriptor fd (taken: closed in every case). */
mica_status_t mica__npy_read_fd(int fd, const char *path, mica__npy_t *out,
                                char *err, size_t errlen);

/* The same from `len` bytes in memory; `what` names them in messages. */
mica_status_t mica__npy_parse(const void *buf, size_t len, const char *what,
                              mica__npy_t *out, char *err, size_t errlen);

/* Free what mica__npy_read allocated (out itself is the caller's). */
void mica__npy_free(mica__npy_t *npy);

/* The .npy descr of a dtype ("<f4"), NULL if it has none. */
const char *mica__npy_descr(mica_dtype_t dtype);

/*
 * Write one array to an open stream.  `major` is the format version to
 * write (1 or 2), or 0 for 1 unless the header needs 2.
 */
mica_status_t mica__npy_write_stream(FILE *f, mica_dtype_t dtype,
                                     const mica_dims_t *dims,
                                     const void *data, int major, char *err,
                                     size_t errlen);

/*
 * Write a new file next to `path` under an unpredictable name (*tmp,
 * malloc'd: "DIR/.NAME.XXXXXX", created O_EXCL without following links,
 * core/base/files.h) and leave it there; the caller renames it into
 * place or removes it.  On failure nothing is left and *tmp is NULL.
 */
mica_status_t mica__npy_write_tmp(const char *path, mica_dtype_t dtype,
                                  const mica_dims_t *dims, const void *data,
                                  int major, char **tmp, char *err,
                                  size_t errlen);

/*
 * Write `path` atomically: write the temporary file, then rename it, so
 * the file is either complete or absent.
 */
mica_status_t mica__npy_write(const char *path, mica_dtype_t dtype,
                              const mica_dims_t *dims, const void *data,
                              int major, char *err, size_t errlen);

#endif /* MICA_NPY_H */

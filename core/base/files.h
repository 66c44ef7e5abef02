/*
 * core/base/files.h - files from outside opened as untrusted, and output
 * files created without following links (core/base/files.c).
 *
 * The rule for a file a model names (ONNX external data, a manifest's
 * weights `file` and `npy`): its name is relative to the model's folder
 * (an absolute name is taken as is), and after following every link its
 * real path must lie inside the model's folder, or inside a folder the
 * caller allowed (mica_context_allow_folder, `mica --allow-folder DIR`);
 * and it must be a regular file (a FIFO or a device is refused, without
 * blocking).  docs/mica.md, "Files a model names".
 */
#ifndef MICA_FILES_H
#define MICA_FILES_H

#include <stddef.h>

#include "mica_int.h"

/*
 * Open `name`, named by a model in folder `dir` ("" the current folder),
 * for reading under the rule above.  Returns a descriptor (close-on-exec,
 * blocking) and, when real is not NULL, its real path (malloc'd); or -1
 * with the status in *st and one line in err ("'NAME' resolves to
 * '/etc/passwd', outside the model's folder 'DIR' (mica --allow-folder
 * allows another)").
 */
int mica__open_inside(const mica_context_t *ctx, const char *dir,
                      const char *name, char **real, mica_status_t *st,
                      char *err, size_t errlen);

/*
 * Create a new file next to `path` under an unpredictable name
 * ("DIR/.NAME.XXXXXX", open with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0666
 * less the umask), for the caller to write and rename over `path`.
 * Returns the descriptor and the name (*tmp, malloc'd), or -1 with errno.
 */
int mica__create_tmp(const char *path, char **tmp);

/* The same as a stream ("wb"); NULL with errno. */
FILE *mica__fcreate_tmp(const char *path, char **tmp);

#endif /* MICA_FILES_H */

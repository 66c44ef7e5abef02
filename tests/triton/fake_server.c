/*
 * tests/triton/fake_server.c - the few TRITONSERVER_ functions that the
 * backend's configuration code calls (errors and the log), for
 * tests/test_triton_config, which runs that code without a server.
 * Errors are what the server's are to the backend: an opaque code and a
 * copied message.  The log is off.
 */
#include <config.h>

#include "triton_api.h"

#include <stdlib.h>
#include <string.h>

struct TRITONSERVER_Error {
    TRITONSERVER_Error_Code code;
    char *msg;
};

TRITONSERVER_Error *TRITONSERVER_ErrorNew(TRITONSERVER_Error_Code code,
                                          const char *msg)
{
    TRITONSERVER_Error *e = malloc(sizeof *e);
    if (!e || !(e->msg = strdup(msg)))
        abort(); /* a test double: no memory is not a case here */
    e->code = code;
    return e;
}

void TRITONSERVER_ErrorDelete(TRITONSERVER_Error *error)
{
    if (error) {
        free(error->msg);
        free(error);
    }
}

TRITONSERVER_Error_Code TRITONSERVER_ErrorCode(TRITONSERVER_Error *error)
{
    return error->code;
}

const char *TRITONSERVER_ErrorMessage(TRITONSERVER_Error *error)
{
    return error->msg;
}

bool TRITONSERVER_LogIsEnabled(TRITONSERVER_LogLevel level)
{
    (void)level;
    return false;
}

TRITONSERVER_Error *TRITONSERVER_LogMessage(TRITONSERVER_LogLevel level,
                                            const char *filename,
                                            const int line, const char *msg)
{
    (void)level;
    (void)filename;
    (void)line;
    (void)msg;
    return NULL;
}

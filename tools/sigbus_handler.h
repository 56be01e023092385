// Turns a SIGBUS in a mapped model file into the CLI's one-line error.
//
// A .seqrt model is mapped (importers/native/mapped_file.h); when the file
// is truncated or rewritten in place while a command runs, the next touch
// of a page that is gone raises SIGBUS, which would kill the process with
// no message. The handler checks the faulting address against the live
// mappings: inside one, it writes "seqrt: error: model file 'PATH' changed
// or was truncated while in use" to stderr and exits with status 1; any
// other SIGBUS keeps the default action (the process dies of it).
#pragma once

namespace seqrt {

// Installs the handler for the whole process (call once, early in main).
void install_sigbus_handler();

}  // namespace seqrt

#include "tools/serve_forward.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace seqrt {

int forward_to_python_serve(int argc, char** argv) {
  const char* python = std::getenv("SEQRT_PYTHON");
  if (python == nullptr || python[0] == '\0') python = "python3";
  std::vector<char*> args;
  args.push_back(const_cast<char*>(python));
  args.push_back(const_cast<char*>("-m"));
  args.push_back(const_cast<char*>("seqrt.serve"));
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);  // after "serve"
  args.push_back(nullptr);
  execvp(python, args.data());
  std::fprintf(stderr,
               "seqrt: error: 'seqrt serve' runs the Python package "
               "seqrt.serve, but '%s' could not be started (%s); install "
               "it with pip install './python[serve]' and name its Python "
               "in SEQRT_PYTHON\n",
               python, std::strerror(errno));
  return 1;
}

}  // namespace seqrt

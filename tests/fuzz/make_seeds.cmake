# Writes the fuzz seed corpora: cmake -DSEED_DIR=... -DSEQRT_CLI=...
#   -DMAKE_MODELS=<sample programs> -DNODE_TESTS=<onnx node test folder>
#   -P make_seeds.cmake
# Seeds are made from the sample models (their .seqrt files and .npy
# inputs) and the node tests listed in node_tests.txt (model.onnx, its
# .seqrt conversion and its .pb inputs), so nothing binary lives in git.
set(targets seqrt_reader onnx_importer tensor_reader graph_compile
            tokenizer_json)
file(REMOVE_RECURSE ${SEED_DIR})
foreach(target IN LISTS targets)
  file(MAKE_DIRECTORY ${SEED_DIR}/${target})
endforeach()

set(models_dir ${SEED_DIR}/models)
foreach(program IN LISTS MAKE_MODELS)
  get_filename_component(name ${program} NAME)
  execute_process(COMMAND ${program} ${models_dir}/${name}
                  RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "${program} failed while writing fuzz seeds")
  endif()
endforeach()
file(GLOB_RECURSE sample_models ${models_dir}/*.seqrt)
foreach(model IN LISTS sample_models)
  file(COPY ${model} DESTINATION ${SEED_DIR}/seqrt_reader)
  file(COPY ${model} DESTINATION ${SEED_DIR}/graph_compile)
endforeach()
file(GLOB_RECURSE sample_inputs ${models_dir}/*.npy)
foreach(input IN LISTS sample_inputs)
  file(COPY ${input} DESTINATION ${SEED_DIR}/tensor_reader)
endforeach()
file(REMOVE_RECURSE ${models_dir})

# The node tests' folder as tests/onnx_node finds it first.
if(DEFINED ENV{SEQRT_ONNX_NODE_TESTS})
  set(NODE_TESTS $ENV{SEQRT_ONNX_NODE_TESTS})
endif()
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/node_tests.txt node_tests
     REGEX "^test_")
set(found 0)
foreach(test IN LISTS node_tests)
  set(dir ${NODE_TESTS}/${test})
  if(NOT EXISTS ${dir}/model.onnx)
    continue()
  endif()
  math(EXPR found "${found} + 1")
  file(COPY_FILE ${dir}/model.onnx ${SEED_DIR}/onnx_importer/${test}.onnx)
  file(COPY_FILE ${dir}/model.onnx ${SEED_DIR}/graph_compile/${test}.onnx)
  # Conversion fails for models with ops seqrt lacks; those seed only the
  # importer.
  execute_process(COMMAND ${SEQRT_CLI} convert ${dir}/model.onnx
                          ${SEED_DIR}/seqrt_reader/${test}.seqrt
                  OUTPUT_QUIET ERROR_QUIET)
  file(GLOB inputs ${dir}/test_data_set_0/*.pb)
  foreach(input IN LISTS inputs)
    get_filename_component(input_name ${input} NAME)
    file(COPY_FILE ${input} ${SEED_DIR}/tensor_reader/${test}_${input_name})
  endforeach()
endforeach()
message(STATUS "fuzz seeds: ${found} node tests from ${NODE_TESTS}")

# The tokenizer.json fixtures of seqrt generate (not their *_cases.json).
file(GLOB tokenizers ${CMAKE_CURRENT_LIST_DIR}/../../tools/generate/testdata/*.json)
list(FILTER tokenizers EXCLUDE REGEX "_cases\\.json$")
foreach(tokenizer IN LISTS tokenizers)
  file(COPY ${tokenizer} DESTINATION ${SEED_DIR}/tokenizer_json)
endforeach()
file(TOUCH ${SEED_DIR}/stamp)

# Writes a C++ file holding each device-library header as a string, named by
# its include path ("kiln/<file>").
set(names "")
set(sources "")
set(count 0)
foreach(header ${HEADERS})
  get_filename_component(file ${header} NAME)
  file(READ ${header} text)
  string(APPEND names "    \"kiln/${file}\",\n")
  string(APPEND sources "    R\"kiln_embed(${text})kiln_embed\",\n")
  math(EXPR count "${count} + 1")
endforeach()
file(WRITE ${OUTPUT} "// Generated from lib/kiln/*.cuh; do not edit.\n"
  "namespace kiln::api {\n"
  "extern const char *const kDeviceLibraryNames[] = {\n${names}};\n"
  "extern const char *const kDeviceLibrarySources[] = {\n${sources}};\n"
  "extern const int kDeviceLibraryCount = ${count};\n"
  "} // namespace kiln::api\n")

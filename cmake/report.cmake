# The HTML report (src/cli/html_report.cpp) runs scripts/report_html.py: the gpunfv binary finds
# it in the source tree it was built from, or installed beside it under share/gpunfv.
target_compile_definitions(gpunfv PRIVATE GPUNFV_SOURCE_DIR="${CMAKE_CURRENT_SOURCE_DIR}")
install(TARGETS gpunfv RUNTIME DESTINATION bin)
install(PROGRAMS scripts/report_html.py DESTINATION share/gpunfv)

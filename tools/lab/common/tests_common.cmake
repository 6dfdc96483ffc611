# SPDX-License-Identifier: MIT
# common/: unit tests of the pieces every command shares (included by
# tools/lab/CMakeLists.txt). aut: the allocator-under-test type; table: the
# output tables (one table filled once, printed as text and written as JSON).
lab_unit(common.aut lab_aut_test common/tests/aut_test.c common/aut.c common/peers.c
         LIBS rtmem::rtmem_static ${CMAKE_DL_LIBS})
lab_unit(common.table lab_table_test common/tests/table_test.c common/table.c common/json.c LIBS m)

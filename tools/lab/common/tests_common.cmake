# SPDX-License-Identifier: MIT
# common/: unit tests of the pieces every command shares (included by
# tools/lab/CMakeLists.txt). aut: the allocator-under-test type; table: the
# output tables (one table filled once, printed as text and written as JSON);
# table_pivot: a filled table shown as a cross-tab (band x allocator, ...).
lab_unit(common.aut lab_aut_test common/tests/aut_test.c common/aut.c common/peers.c
         LIBS rtmem::rtmem_static ${CMAKE_DL_LIBS})
lab_unit(common.table lab_table_test common/tests/table_test.c common/table.c common/json.c LIBS m)
lab_unit(common.table_pivot lab_table_pivot_test common/tests/table_pivot_test.c
         common/table_pivot.c common/table.c common/json.c LIBS m)

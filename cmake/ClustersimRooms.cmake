# Rooms: each folder of the simulator is one CMake target that sees only the rooms it declares.
#
# A room's sources include headers by their path from the repository root ("sim/engine/executor.hpp").
# Instead of putting the whole repository on the include path, each room gets its own include root in the
# build tree holding symbolic links to exactly the rooms it may see: itself, the rooms it USES, and what
# those see in turn (their headers include their own dependencies). A header of any other room is simply
# not found, so a forbidden include fails to compile, not just a review. Rooms link each other PRIVATE.
#
#   clustersim_room(<name> PATH <dir-or-file> [SOURCES ...] [USES room...] [LIBS lib...] [PUBLIC_LIBS lib...])
#
# creates the target clustersim_<name> (STATIC with SOURCES, INTERFACE without).
function(clustersim_room name)
  cmake_parse_arguments(R "" "PATH" "SOURCES;USES;LIBS;PUBLIC_LIBS" ${ARGN})
  if(NOT R_PATH)
    message(FATAL_ERROR "clustersim_room(${name}): PATH is required")
  endif()
  set(sees ${name})
  foreach(dep IN LISTS R_USES)
    get_property(dep_sees GLOBAL PROPERTY CLUSTERSIM_ROOM_SEES_${dep})
    if(NOT dep_sees)
      message(FATAL_ERROR "clustersim_room(${name}): room '${dep}' is not declared (declare it first)")
    endif()
    list(APPEND sees ${dep_sees})
  endforeach()
  list(REMOVE_DUPLICATES sees)
  set_property(GLOBAL PROPERTY CLUSTERSIM_ROOM_SEES_${name} ${sees})
  set_property(GLOBAL PROPERTY CLUSTERSIM_ROOM_PATH_${name} ${R_PATH})

  set(root ${PROJECT_BINARY_DIR}/rooms/${name})
  foreach(room IN LISTS sees)
    get_property(p GLOBAL PROPERTY CLUSTERSIM_ROOM_PATH_${room})
    get_filename_component(parent ${root}/${p} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${p} ${root}/${p} SYMBOLIC)
  endforeach()

  set(deps)
  foreach(dep IN LISTS R_USES)
    list(APPEND deps clustersim_${dep})
  endforeach()
  if(R_SOURCES)
    add_library(clustersim_${name} STATIC ${R_SOURCES})
    target_include_directories(clustersim_${name} PRIVATE ${root})
    target_link_libraries(clustersim_${name} PRIVATE ${deps} clustersim_options ${R_LIBS} PUBLIC ${R_PUBLIC_LIBS})
  else()
    add_library(clustersim_${name} INTERFACE)
    target_link_libraries(clustersim_${name} INTERFACE ${deps} ${R_PUBLIC_LIBS})
  endif()
endfunction()

# The include root of a room, for an executable that is built with the room's view (the CLI, the GUI).
function(clustersim_room_include_root name out)
  set(${out} ${PROJECT_BINARY_DIR}/rooms/${name} PARENT_SCOPE)
endfunction()

# Writes help2man's include file for mpspack(1): a COMMANDS section with every subcommand's own --help, taken
# from the executable so that the man page lists what the command line defines.
#   cmake -DMPSPACK=path/to/mpspack -DOUT=commands.h2m -P man_commands.cmake
execute_process(COMMAND ${MPSPACK} --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${MPSPACK} --help failed")
endif()
string(REGEX REPLACE ".*\nSubcommands:\n" "" listing "${top}")
string(REGEX MATCHALL "\n?  ([a-z]+) " names "${listing}")
set(text "[COMMANDS]\n")
foreach(entry IN LISTS names)
  string(STRIP "${entry}" name)
  execute_process(COMMAND ${MPSPACK} ${name} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${MPSPACK} ${name} --help failed")
  endif()
  # roff: a backslash is written \e; a line may not start with '.' or a quote.
  string(REPLACE "\\" "\\e" help "${help}")
  string(REGEX REPLACE "\n([.'])" "\n\\\\&\\1" help "${help}")
  string(APPEND text ".SS ${name}\n.nf\n${help}.fi\n")
endforeach()
file(WRITE ${OUT} "${text}")

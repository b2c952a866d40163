# The rules every subdirectory shares (its Makefile includes them): its objects by a
# pattern rule, archived as lib<directory>.a under the shared lock.
OBJS := $(patsubst %.c,%.o,$(sort $(wildcard *.c)))
LIB := lib$(notdir $(CURDIR)).a

.PHONY: all
all: $(LIB)

$(LIB): $(OBJS)
	while test -f ../.ar.lock; do sleep 0.05; done; echo $(LIB) > ../.ar.lock
	rm -f $@
	ar rU $@ $(OBJS)
	ranlib $@
	rm -f ../.ar.lock

%.o: %.c
	gcc -O2 -c $< -o $@

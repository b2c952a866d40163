# The rules (fossil's src/main.mk shape). BUG: the tools are linked into $(OBJDIR), which
# `all` lists first and a rule of its own makes, but no tool rule depends on it (each
# should have `| $(OBJDIR)`). make's own order makes bld first; a shuffled or parallel
# order may link a tool before `mkdir bld` ran.
SRC = src/alpha.c src/beta.c

.SECONDARY:

all: $(OBJDIR) $(APPNAME)

$(OBJDIR):
	-mkdir $(OBJDIR)

$(OBJDIR)/mkindex: tools/mkindex.c
	$(BCC) -o $(OBJDIR)/mkindex tools/mkindex.c

$(OBJDIR)/translate $(OBJDIR)/makeheaders: $(OBJDIR)/%: tools/%.c
	$(BCC) -o $@ $<

$(OBJDIR)/%_.c: src/%.c $(OBJDIR)/translate
	$(OBJDIR)/translate $< > $@

$(OBJDIR)/page_index.h: $(SRC) $(OBJDIR)/mkindex
	$(OBJDIR)/mkindex $(SRC) > $@

$(OBJDIR)/headers.h: $(OBJDIR)/makeheaders $(OBJDIR)/page_index.h
	$(OBJDIR)/makeheaders $(OBJDIR)/page_index.h > $@

$(OBJDIR)/%.o: $(OBJDIR)/%_.c $(OBJDIR)/headers.h
	$(CC) -I$(OBJDIR) -c $< -o $@

$(APPNAME): $(OBJDIR)/alpha.o $(OBJDIR)/beta.o src/main.c $(OBJDIR)/headers.h
	$(CC) -I$(OBJDIR) -o $@ src/main.c $(OBJDIR)/alpha.o $(OBJDIR)/beta.o

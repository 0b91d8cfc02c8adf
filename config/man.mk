# Substitute build-time values into hand-written roff man pages (and, in
# etc/, the systemd unit).
SUFFIXES = .1.in .1 .5.in .5 .7.in .7 .8.in .8
man_subst = sed \
	-e 's|[@]VERSION[@]|$(VERSION)|g' \
	-e 's|[@]sysconfdir[@]|$(sysconfdir)|g' \
	-e 's|[@]localstatedir[@]|$(localstatedir)|g' \
	-e 's|[@]runstatedir[@]|$(runstatedir)|g' \
	-e 's|[@]sbindir[@]|$(sbindir)|g' \
	-e 's|[@]bindir[@]|$(bindir)|g' \
	-e 's|[@]datadir[@]|$(datadir)|g' \
	-e 's|[@]slurmplugindir[@]|$(slurmplugindir)|g'
.1.in.1:
	$(AM_V_GEN)$(man_subst) $< > $@
.5.in.5:
	$(AM_V_GEN)$(man_subst) $< > $@
.7.in.7:
	$(AM_V_GEN)$(man_subst) $< > $@
.8.in.8:
	$(AM_V_GEN)$(man_subst) $< > $@

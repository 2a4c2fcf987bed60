# netstack/pcap.mk: filled in by the piece it names.

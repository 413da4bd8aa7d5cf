// TEMPer adapter

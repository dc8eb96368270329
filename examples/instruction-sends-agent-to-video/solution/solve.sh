#!/bin/bash
printf '%s\n' 'open mailbox' 'read leaflet' 'south' 'east' 'open window' 'enter house' > /app/moves.txt

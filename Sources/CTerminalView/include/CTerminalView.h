// CTerminalView: the few ncurses calls `monitor --view` makes, as plain functions. ncurses spells several of them
// as macros (getmaxyx, attron), which Swift cannot import; nothing of curses.h leaks into Swift.
#ifndef C_TERMINAL_VIEW_H
#define C_TERMINAL_VIEW_H

/// Takes over the terminal on standard input/output (newterm: fails instead of exiting when TERM is unknown):
/// cbreak, no echo, no cursor, non-blocking key reads, the alternate screen. Returns 0, or -1 when it cannot.
int CTerminalView_begin(void);
/// Gives the terminal back as it was (endwin). Safe to call when `begin` failed or twice.
void CTerminalView_end(void);
/// The window's size in rows and columns.
void CTerminalView_size(int *rows, int *columns);
/// Starts a new frame (erase: the next `show` redraws only what changed).
void CTerminalView_clear(void);
/// Draws `text` (ASCII) at row, column; highlighted in reverse video.
void CTerminalView_put(int row, int column, const char *text, int highlighted);
/// Shows the frame (refresh).
void CTerminalView_show(void);
/// Takes the window's size from the terminal (TIOCGWINSZ) and resizes ncurses' screens to it: for a SIGWINCH
/// that padbridge's own signal handling received (ncurses' handler never sees it then).
void CTerminalView_followWindowSize(void);
/// The next key, or -1 when none is waiting; CTerminalView_resized() for a window size change.
int CTerminalView_key(void);
int CTerminalView_resized(void);

#endif

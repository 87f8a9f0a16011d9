#include <curses.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "CTerminalView.h"

static SCREEN *screen;

int CTerminalView_begin(void) {
    if (screen) return 0;
    screen = newterm(NULL, stdout, stdin);
    if (!screen) return -1;
    set_term(screen);
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    curs_set(0);
    return 0;
}

void CTerminalView_end(void) {
    if (!screen) return;
    curs_set(1);
    endwin();
    delscreen(screen);
    screen = NULL;
}

void CTerminalView_size(int *rows, int *columns) {
    int r = 0, c = 0;
    if (screen) getmaxyx(stdscr, r, c);
    *rows = r;
    *columns = c;
}

void CTerminalView_clear(void) {
    if (screen) erase();
}

void CTerminalView_put(int row, int column, const char *text, int highlighted) {
    if (!screen) return;
    if (highlighted) attron(A_REVERSE);
    mvaddstr(row, column, text);
    if (highlighted) attroff(A_REVERSE);
}

void CTerminalView_show(void) {
    if (screen) refresh();
}

int CTerminalView_key(void) {
    if (!screen) return -1;
    int key = getch();
    return key == ERR ? -1 : key;
}

int CTerminalView_resized(void) { return KEY_RESIZE; }

void CTerminalView_followWindowSize(void) {
    struct winsize size;
    if (screen && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_row > 0 && size.ws_col > 0) {
        resizeterm(size.ws_row, size.ws_col);
    }
}

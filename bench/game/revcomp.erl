%% reverse-complement (Computer Language Benchmarks Game), written from the
%% published algorithm: read a FASTA file on standard input and write, for
%% each sequence, its header and its reverse complement (IUB codes; lower
%% case complemented to upper case), in lines of 60. Each sequence, once
%% read, is reversed and complemented by a process of its own while the
%% reading goes on; the results are written in input order.
%%
%% Run:  erlc revcomp.erl && erl -noshell -run revcomp main < fasta-1000.txt
%% (the module is revcomp: an Erlang module name cannot hold a dash)
-module(revcomp).
-export([main/0, main/1]).

-define(WIDTH, 60).

main() -> main([]).

main(_) ->
    ok = io:setopts(standard_io, [binary, {encoding, latin1}]),
    Table = table(),
    Refs = read(Table, io:get_line(""), undefined, [], []),
    [receive {Ref, Text} -> file:write(standard_io, Text) end || Ref <- Refs],
    halt(0).

table() ->
    T = list_to_tuple(lists:seq(0, 255)),
    Pairs = lists:zip("ACBDGHKMNSRUTWVYacbdghkmnsrutwvy",
                      "TGVHCDMKNSYAAWBRTGVHCDMKNSYAAWBR"),
    lists:foldl(fun({From, To}, Acc) -> setelement(From + 1, Acc, To) end,
                T, Pairs).

%% Lines is the current sequence's lines, last first; Refs the sequences
%% started, last first.
read(Table, eof, Header, Lines, Refs) ->
    lists:reverse(start(Table, Header, Lines, Refs));
read(Table, <<">", _/binary>> = Line, Header, Lines, Refs) ->
    read(Table, io:get_line(""), chomp(Line), [],
         start(Table, Header, Lines, Refs));
read(Table, Line, Header, Lines, Refs) ->
    read(Table, io:get_line(""), Header, [chomp(Line) | Lines], Refs).

chomp(Line) ->
    case binary:last(Line) of
        $\n -> binary:part(Line, 0, byte_size(Line) - 1);
        _ -> Line
    end.

start(_Table, undefined, _Lines, Refs) -> Refs;
start(Table, Header, Lines, Refs) ->
    Me = self(),
    Ref = make_ref(),
    spawn(fun() -> Me ! {Ref, [Header, $\n | revcomp(Table, Lines)]} end),
    [Ref | Refs].

%% Lines come last first: reversing each line and complementing it gives
%% the reverse complement in order.
revcomp(Table, Lines) ->
    Seq = << <<(element(C + 1, Table))>>
             || Line <- Lines, C <- lists:reverse(binary_to_list(Line)) >>,
    wrap(Seq).

wrap(Seq) when byte_size(Seq) =< ?WIDTH -> [Seq, $\n];
wrap(<<Line:?WIDTH/binary, Rest/binary>>) -> [Line, $\n | wrap(Rest)].

%% regex-redux (Computer Language Benchmarks Game), written from the
%% published algorithm: read a FASTA file on standard input, take out the
%% headers and line ends, count the matches of nine DNA 8-mer variants
%% (each by a process of its own, while the main process makes the
%% substitutions), replace IUB codes by five substitutions in turn, and
%% print the lengths of the input, of the sequence and of the result.
%%
%% Run:  erlc regexredux.erl && erl -noshell -run regexredux main < fasta-1000.txt
%% (the module is regexredux: an Erlang module name cannot hold a dash)
-module(regexredux).
-export([main/0, main/1]).

variants() ->
    ["agggtaaa|tttaccct",
     "[cgt]gggtaaa|tttaccc[acg]",
     "a[act]ggtaaa|tttacc[agt]t",
     "ag[act]gtaaa|tttac[agt]ct",
     "agg[act]taaa|ttta[agt]cct",
     "aggg[acg]aaa|ttt[cgt]ccct",
     "agggt[cgt]aa|tt[acg]accct",
     "agggta[cgt]a|t[acg]taccct",
     "agggtaa[cgt]|[acg]ttaccct"].

substitutions() ->
    [{"tHa[Nt]", "<4>"},
     {"aND|caN|Ha[DS]|WaS", "<3>"},
     {"a[NSt]|BY", "<2>"},
     {"<[^>]*>", "|"},
     {"\\|[^|][^|]*\\|", "-"}].

main() -> main([]).

main(_) ->
    ok = io:setopts(standard_io, [binary, {encoding, latin1}]),
    Input = read_all([]),
    Dna = re:replace(Input, ">.*\n|\n", "", [global, {return, binary}]),
    Me = self(),
    Refs = [begin
                Ref = make_ref(),
                spawn(fun() -> Me ! {Ref, count(Dna, V)} end),
                Ref
            end || V <- variants()],
    Result = lists:foldl(fun({Re, Repl}, S) ->
                                 re:replace(S, Re, Repl, [global, {return, binary}])
                         end, Dna, substitutions()),
    [receive {Ref, N} -> io:format("~s ~b~n", [V, N]) end
     || {V, Ref} <- lists:zip(variants(), Refs)],
    io:format("~n~b~n~b~n~b~n", [byte_size(Input), byte_size(Dna), byte_size(Result)]),
    halt(0).

read_all(Acc) ->
    case io:get_chars("", 65536) of
        eof -> iolist_to_binary(lists:reverse(Acc));
        Data -> read_all([Data | Acc])
    end.

count(Dna, Variant) ->
    case re:run(Dna, Variant, [global, {capture, first, index}]) of
        {match, Matches} -> length(Matches);
        nomatch -> 0
    end.

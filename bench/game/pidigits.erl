%% pidigits (Computer Language Benchmarks Game), written from the published
%% algorithm: the first N digits of pi by the unbounded spigot algorithm
%% (Gibbons) on Erlang's big integers, ten to a line, each line followed by
%% a tab, a colon and the count so far.
%%
%% Run:  erlc pidigits.erl && erl -noshell -run pidigits main 27
-module(pidigits).
-export([main/1]).

main([Arg]) ->
    pidigits(list_to_integer(Arg)),
    halt(0);
main(_) ->
    main(["27"]).

pidigits(N) -> loop(N, 1, 1, 0, 1, 0, []).

extract(Num, Acc, Den, Nth) -> (Num * Nth + Acc) div Den.

line(Digits, I) ->
    io:put_chars([io_lib:format("~-10s", [lists:reverse(Digits)]),
                  "\t:", integer_to_list(I), "\n"]).

loop(N, _K, _Num, _Acc, _Den, I, _Digits) when I >= N -> ok;
loop(N, K, Num0, Acc0, Den0, I, Digits) ->
    K2 = 2 * K + 1,
    Acc = (Acc0 + 2 * Num0) * K2,
    Den = Den0 * K2,
    Num = Num0 * K,
    case Num > Acc of
        true -> loop(N, K + 1, Num, Acc, Den, I, Digits);
        false ->
            D = extract(Num, Acc, Den, 3),
            case extract(Num, Acc, Den, 4) of
                D ->
                    I1 = I + 1,
                    Digits1 = [$0 + D | Digits],
                    Full = I1 rem 10 =:= 0,
                    (Full orelse I1 =:= N) andalso line(Digits1, I1),
                    loop(N, K + 1, Num * 10, 10 * (Acc - Den * D), Den, I1,
                         case Full of true -> []; false -> Digits1 end);
                _ ->
                    loop(N, K + 1, Num, Acc, Den, I, Digits)
            end
    end.
